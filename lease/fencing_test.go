package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Test 6: beside the lock, a fenced write is applied only for the newest lease: the older owner
// is refused from the moment the newer lease exists, before and after the newer owner writes,
// and one lease may write many times.
func TestFencedWriteRejectsOlderOwner(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		e := newEnvMode(t, sharedAddr, single)
		n := e.namespace(t, "snapshot", Policy{TTL: 100 * time.Millisecond, DisableRenewal: true, Fencing: true})
		ctx := context.Background()
		lockKey := uniqueKey(t)
		dataKey := besideLock(lockKey)
		a, err := n.Acquire(ctx, lockKey)
		if err != nil {
			t.Fatal(err)
		}
		write := func(who string, fence int64, applied bool) {
			t.Helper()
			err := n.FencedSet(ctx, lockKey, fence, dataKey, "from "+who, time.Minute)
			if applied && err != nil || !applied && !errors.Is(err, ErrStaleFence) {
				t.Fatalf("%s's write (fence %d) = %v, want applied=%v", who, fence, err, applied)
			}
		}
		write("a", a.Fence(), true)
		write("a", a.Fence(), true)
		// A "pauses" past its TTL; B takes over with a newer fence.
		testkit.Eventually(t, 20*time.Second, "A's lease to expire", func() bool { return e.rdb.Exists(ctx, lockKey).Val() == 0 })
		b, err := n.Acquire(ctx, lockKey)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = b.Release(ctx) }()
		write("a", a.Fence(), false) // before B's first write: B's newer lease alone refuses it
		write("b", b.Fence(), true)
		write("a", a.Fence(), false)
		write("b", b.Fence(), true)
		if got := e.rdb.Get(ctx, dataKey).Val(); got != "from b" {
			t.Errorf("data = %q, want %q", got, "from b")
		}
		if n := e.rdb.Exists(ctx, lockkeys.WriteFence(dataKey)).Val(); n != 0 {
			t.Errorf("FencedSet left a write-fence record: it needs none beside the lock")
		}
		e.wantMetrics(t, "snapshot", map[string]float64{
			"lock_fenced_writes_total/applied":  4,
			"lock_fenced_writes_total/rejected": 2,
		})
	})
}

// A holder whose lease is gone writes with its old fence after a newer lease was issued, before
// the new holder's first write: the write fencing exists to refuse. Beside the lock the newer
// lease alone refuses it; for data elsewhere the new holder's Claim does.
func TestStaleWriteRejectedBeforeNewHolderWrites(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	n := e.namespace(t, "snapshot", Policy{TTL: 100 * time.Millisecond, DisableRenewal: true, Fencing: true})
	lockKey := uniqueKey(t)
	elsewhere := uniqueKey(t) + ":elsewhere"
	g := n.Guard(nil)
	a, err := n.Acquire(ctx, lockKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Claim(ctx, a.Fence(), elsewhere); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "A's lease to expire", func() bool { return e.rdb.Exists(ctx, lockKey).Val() == 0 })
	b, err := n.Acquire(ctx, lockKey)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Release(ctx) }()
	if err := n.FencedSet(ctx, lockKey, a.Fence(), besideLock(lockKey), "stale", 0); !errors.Is(err, ErrStaleFence) {
		t.Errorf("stale holder's write beside the lock before the new holder wrote: %v, want ErrStaleFence", err)
	}
	if err := g.Claim(ctx, b.Fence(), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := g.Set(ctx, a.Fence(), elsewhere, "stale", 0); !errors.Is(err, ErrStaleFence) {
		t.Errorf("stale holder's write elsewhere after the new holder's claim: %v, want ErrStaleFence", err)
	}
	if err := g.Claim(ctx, a.Fence(), elsewhere); !errors.Is(err, ErrStaleFence) {
		t.Errorf("stale holder's claim: %v, want ErrStaleFence", err)
	}
	if got := e.rdb.Exists(ctx, elsewhere).Val(); got != 0 {
		t.Errorf("the stale write landed")
	}
}

// The fence key lives as long as its lease can: a holder that renews past TTL + FenceRetention
// still writes, and once the lease lapsed and the fence key expired every write is refused.
func TestFencedSetFollowsTheFenceKey(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	// The renewer has TTL + FenceRetention (six renew intervals) to keep the fence key alive:
	// a machine busy with other work stalls a renew by a few hundred milliseconds at worst.
	const ttl, retention = 600 * time.Millisecond, 200 * time.Millisecond
	n := e.namespace(t, "snapshot", Policy{TTL: ttl, FenceRetention: retention, RenewInterval: 120 * time.Millisecond,
		RenewTimeout: 120 * time.Millisecond, OnRenewFailure: Continue, Fencing: true})
	lockKey := uniqueKey(t)
	data := besideLock(lockKey)
	l, err := n.Acquire(ctx, lockKey)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * (ttl + retention))
	if err := n.FencedSet(ctx, lockKey, l.Fence(), data, "late but held", 0); err != nil {
		t.Fatalf("write of a lease renewed past TTL + FenceRetention: %v", err)
	}
	if pttl := e.rdb.PTTL(ctx, lockkeys.Fence(lockKey)).Val(); pttl <= 0 || pttl > ttl+retention {
		t.Errorf("fence key PTTL while renewing = %v, want in (0, %v]", pttl, ttl+retention)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the fence key to expire", func() bool {
		return e.rdb.Exists(ctx, lockkeys.Fence(lockKey)).Val() == 0
	})
	if err := n.FencedSet(ctx, lockKey, l.Fence(), data, "after the fence key", 0); !errors.Is(err, ErrStaleFence) {
		t.Errorf("write after the fence key expired = %v, want ErrStaleFence", err)
	}
}

func TestFencedSetInput(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "snapshot", Policy{Fencing: true})
	ctx := context.Background()
	lockKey := uniqueKey(t)
	l, err := n.Acquire(ctx, lockKey)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	if err := n.FencedSet(ctx, lockKey, 0, besideLock(lockKey), "v", 0); !errors.Is(err, ErrNoFence) {
		t.Errorf("fence 0: %v", err)
	}
	for _, tc := range []struct{ lock, data string }{
		{"", "{}:data"},
		{"a}b", "{a}b}:data"},
		{lockKey, ""},
		{lockKey, lockKey + ":data"}, // another slot on a cluster
		{"{t}:lock", "{u}:data"},
	} {
		if err := n.FencedSet(ctx, tc.lock, l.Fence(), tc.data, "v", 0); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("lock %q, data %q: %v, want ErrInvalidKey", tc.lock, tc.data, err)
		}
	}
	data := besideLock(lockKey)
	if err := n.FencedSet(ctx, lockKey, l.Fence(), data, "v", 0); err != nil {
		t.Fatal(err)
	}
	if ttl := e.rdb.PTTL(ctx, data).Val(); ttl != -time.Nanosecond {
		t.Errorf("ttl 0 wrote a key with PTTL %s, want none", ttl)
	}
	if err := n.FencedSet(ctx, lockKey, l.Fence(), data, "v", 500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "a sub-millisecond ttl to expire the key", func() bool { return e.rdb.Exists(ctx, data).Val() == 0 })
	never := uniqueKey(t)
	if err := n.FencedSet(ctx, never, l.Fence(), besideLock(never), "v", 0); !errors.Is(err, ErrStaleFence) {
		t.Errorf("write for a lock never acquired: %v, want ErrStaleFence", err)
	}
}

// Guard.Set keeps the write-fence record: an older fence is refused once a newer one wrote, and
// one lease may write many times.
func TestGuardSetRejectsOlderOwner(t *testing.T) {
	tests := []struct {
		name  string
		steps []string // "a" or "b" writes, in order
		want  []bool   // applied?
		final string
	}{
		{"stale writer after the new owner", []string{"b", "a"}, []bool{true, false}, "from b"},
		{"both in order, then the stale one again", []string{"a", "b", "a"}, []bool{true, true, false}, "from b"},
		{"one lease writes repeatedly", []string{"a", "a", "b", "b"}, []bool{true, true, true, true}, "from b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sharedAddr)
			n := e.namespace(t, "snapshot", Policy{TTL: time.Minute, Fencing: true})
			g := n.Guard(nil)
			fences := map[string]int64{"a": 100, "b": 200}
			dataKey := uniqueKey(t)
			var applied, rejected float64
			for i, who := range tc.steps {
				err := g.Set(context.Background(), fences[who], dataKey, "from "+who, time.Minute)
				if got := err == nil; got != tc.want[i] {
					t.Fatalf("step %d (%s): err = %v, want applied=%v", i, who, err, tc.want[i])
				}
				if err != nil && !errors.Is(err, ErrStaleFence) {
					t.Fatalf("rejection is %v, want ErrStaleFence", err)
				}
				if tc.want[i] {
					applied++
				} else {
					rejected++
				}
			}
			if got := e.rdb.Get(context.Background(), dataKey).Val(); got != tc.final {
				t.Errorf("data = %q, want %q", got, tc.final)
			}
			if got := e.rdb.Get(context.Background(), lockkeys.WriteFence(dataKey)).Val(); got != "200" {
				t.Errorf("write fence record = %q, want 200", got)
			}
			e.wantMetrics(t, "snapshot", map[string]float64{
				"lock_fenced_writes_total/applied":  applied,
				"lock_fenced_writes_total/rejected": rejected,
			})
		})
	}
}

// Claim raises the records of every key it is given, refuses an older fence naming the key, and
// may be repeated; it writes no data and counts no write.
func TestGuardClaim(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	n := e.namespace(t, "snapshot", Policy{TTL: time.Minute, Fencing: true})
	g := n.Guard(e.rdb)
	k1, k2 := uniqueKey(t)+":1", uniqueKey(t)+":2"
	if err := g.Claim(ctx, 0, k1); !errors.Is(err, ErrNoFence) {
		t.Errorf("claim with fence 0: %v", err)
	}
	if err := g.Claim(ctx, 5, k1, "a}b"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("claim of an untaggable key: %v", err)
	}
	if e.rdb.Exists(ctx, lockkeys.WriteFence(k1)).Val() != 0 {
		t.Fatal("a claim with an invalid key raised the valid one's record")
	}
	if err := g.Set(ctx, 7, k2, "by 7", 0); err != nil {
		t.Fatal(err)
	}
	if err := g.Claim(ctx, 5, k1, k2); !errors.Is(err, ErrStaleFence) || !strings.Contains(err.Error(), k2) {
		t.Errorf("claim over a newer record = %v, want ErrStaleFence naming %q", err, k2)
	}
	for range 2 {
		if err := g.Claim(ctx, 9, k1, k2); err != nil {
			t.Fatalf("claim: %v", err)
		}
	}
	for _, k := range []string{k1, k2} {
		if got := e.rdb.Get(ctx, lockkeys.WriteFence(k)).Val(); got != "9" {
			t.Errorf("record of %q = %q, want 9", k, got)
		}
		if err := g.Set(ctx, 8, k, "by 8", 0); !errors.Is(err, ErrStaleFence) {
			t.Errorf("older write after the claim of %q = %v, want ErrStaleFence", k, err)
		}
	}
	if e.rdb.Exists(ctx, k1).Val() != 0 || e.rdb.Get(ctx, k2).Val() != "by 7" {
		t.Error("a claim or a refused write changed the data")
	}
	if err := g.Set(ctx, 9, k1, "by 9", 0); err != nil {
		t.Errorf("the claimer's own write: %v", err)
	}
	e.wantMetrics(t, "snapshot", map[string]float64{
		"lock_fenced_writes_total/applied":  2,
		"lock_fenced_writes_total/rejected": 2,
	})
}

func TestGuardSetInputAndExpiry(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "snapshot", Policy{Fencing: true})
	g := n.Guard(nil)
	ctx := context.Background()
	if err := g.Set(ctx, 0, "k", "v", 0); !errors.Is(err, ErrNoFence) {
		t.Errorf("fence 0: %v", err)
	}
	for _, key := range []string{"", "a}b"} {
		if err := g.Set(ctx, 1, key, "v", 0); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	key := uniqueKey(t)
	if err := g.Set(ctx, 7, key, "v", 0); err != nil {
		t.Fatal(err)
	}
	if ttl := e.rdb.PTTL(ctx, key).Val(); ttl != -1 {
		t.Errorf("ttl 0 wrote a key with PTTL %s, want none", ttl)
	}
	if err := g.Set(ctx, 7, key, "v", 500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "a sub-millisecond ttl to expire the key", func() bool { return e.rdb.Exists(ctx, key).Val() == 0 })
	if got := e.rdb.Get(ctx, lockkeys.WriteFence(key)).Val(); got != "7" {
		t.Errorf("write fence record = %q, want it kept past the data's expiry", got)
	}
	if err := g.Set(ctx, 6, key, "v", 0); !errors.Is(err, ErrStaleFence) {
		t.Errorf("older fence after expiry of the data: %v, want ErrStaleFence", err)
	}
}

// A fenced namespace refuses lock keys whose fence key could land on another cluster slot.
func TestFencedAcquireRejectsUntaggableKeys(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "scheduler", Policy{Fencing: true})
	for _, key := range []string{"", "a}b", "{}job"} {
		if _, err := n.Acquire(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Acquire(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}
