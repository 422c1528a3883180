package lease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// serverMicros is the Redis server's clock in microseconds, as the fence script reads it.
func serverMicros(t testing.TB, rdb *redis.Client) int64 {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// TestFenceKeysAreBounded: per-item locks leave no fence keys behind. 100,000 distinct keys are
// acquired and released with fencing; while that runs every key in Redis has an expiry, once it
// ended every key left expires within TTL + FenceRetention, and then the database empties. (INCR
// counters left one key per lock key, forever.) The TTL is long beside the stalls of a starved
// machine, so that every lease outlives its acquire-to-release: what is checked is each key's
// expiry, not how fast the workers run.
func TestFenceKeysAreBounded(t *testing.T) {
	keys := 100_000
	if testing.Short() {
		keys = 5_000
	}
	srv := redistest.Start(t)
	e := newEnv(t, srv.Addr)
	ctx := context.Background()
	const ttl, retention = 10 * time.Second, 500 * time.Millisecond
	n := e.namespace(t, "per-item", Policy{TTL: ttl, FenceRetention: retention, DisableRenewal: true, Fencing: true,
		AcquireTimeout: patient, ReleaseTimeout: patient})

	const workers = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < keys; i += workers {
				l, err := n.Acquire(ctx, "job:"+strconv.Itoa(i))
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
					return
				}
			}
		})
	}
	// While the workers run, no key in the database may lack an expiry.
	stop := make(chan struct{})
	sampled := make(chan int64, 1)
	go func() {
		var peak int64
		defer func() { sampled <- peak }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			peak = max(peak, e.rdb.DBSize(ctx).Val())
			if k, err := e.rdb.RandomKey(ctx).Result(); err == nil {
				if pttl := e.rdb.PTTL(ctx, k).Val(); pttl == -time.Nanosecond {
					t.Errorf("key %q has no expiry", k)
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	peak := <-sampled
	if t.Failed() {
		return
	}
	live := e.rdb.DBSize(ctx).Val()
	t.Logf("%d keys acquired and released: %d keys in Redis at the end, at most %d sampled during the run", keys, live, peak)
	// Every fence key expires TTL + FenceRetention after the acquisition that wrote it, and none
	// runs any more: what is left expires within that bound from now, and Redis then drops it.
	wantExpiryWithin(t, e.rdb, ttl+retention)
	testkit.Eventually(t, ttl+retention+10*time.Second, "every fence key to expire", func() bool {
		return e.rdb.DBSize(ctx).Val() == 0
	})
}

// wantExpiryWithin fails t unless every key in rdb's database expires within bound from now.
func wantExpiryWithin(t testing.TB, rdb *redis.Client, bound time.Duration) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for batch := range slices.Chunk(keys, 1000) {
		pttls := make([]*redis.DurationCmd, len(batch))
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range batch {
				pttls[i] = p.PTTL(ctx, k)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i, c := range pttls {
			// -2 (the key expired since KEYS listed it) is within the bound; -1 is no expiry.
			if pttl := c.Val(); pttl == -time.Nanosecond || pttl > bound {
				t.Fatalf("key %q expires in %v, want within %v", batch[i], pttl, bound)
			}
		}
	}
}

// TestFencesRise: fences of one key rise strictly across owners (also faster than the server
// clock ticks), after the fence key expired, and over a fence key that runs ahead of the clock.
// Each owner releases long before its TTL, however starved the machine: the fence key's own
// expiry is brought forward instead of waited for (TestFenceKeyExpiry checks when it is set).
func TestFencesRise(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	n := e.namespace(t, "rise", Policy{TTL: time.Minute, DisableRenewal: true, Fencing: true, AcquireTimeout: patient, ReleaseTimeout: patient})
	key := uniqueKey(t)
	next := func(what string, after int64) int64 {
		t.Helper()
		l, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if l.Fence() <= after {
			t.Fatalf("%s: fence %d, want above %d", what, l.Fence(), after)
		}
		return l.Fence()
	}
	last := int64(0)
	for i := range 300 {
		last = next(fmt.Sprintf("owner %d", i), last)
	}
	// The fence key expires; the clock carries the fences on.
	if set, err := e.rdb.PExpire(ctx, lockkeys.Fence(key), time.Millisecond).Result(); !set || err != nil {
		t.Fatalf("PEXPIRE of the fence key = %v, %v: want the key there to expire", set, err)
	}
	testkit.Eventually(t, 5*time.Second, "the fence key to expire", func() bool {
		return e.rdb.Exists(ctx, lockkeys.Fence(key)).Val() == 0
	})
	last = next("after the fence key expired", last)
	// A fence key ahead of the clock (the clock stepped back, or a failover to a node whose
	// clock is behind) is followed, not undercut.
	ahead := serverMicros(t, e.rdb) + int64(time.Hour/time.Microsecond)
	e.rdb.Set(ctx, lockkeys.Fence(key), ahead, 0)
	if got := next("with a fence key ahead of the clock", last); got != ahead+1 {
		t.Errorf("fence over a stored %d = %d, want %d", ahead, got, ahead+1)
	}
}

// TestFenceKeyExpiry: the fence key expires TTL + FenceRetention after the acquisition, also
// when it was an old counter without expiry.
func TestFenceKeyExpiry(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	const ttl, retention = 10 * time.Second, 20 * time.Second
	n := e.namespace(t, "expiry", Policy{TTL: ttl, FenceRetention: retention, DisableRenewal: true, Fencing: true})
	key := uniqueKey(t)
	e.rdb.Set(ctx, lockkeys.Fence(key), 41, 0) // an INCR counter of an earlier version: no expiry
	l, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	pttl := e.rdb.PTTL(ctx, lockkeys.Fence(key)).Val()
	if pttl <= ttl || pttl > ttl+retention {
		t.Errorf("fence key PTTL = %v, want in (%v, %v]", pttl, ttl, ttl+retention)
	}
}

// TestFenceMigrationFromCounters: fences after an upgrade from INCR counters are above every
// counter value, however large, so a stale holder of the old version stays rejected.
func TestFenceMigrationFromCounters(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	n := e.namespace(t, "migration", Policy{TTL: time.Minute, Fencing: true})
	now := serverMicros(t, e.rdb)
	for _, tc := range []struct {
		name    string
		counter int64
	}{
		{"small counter", 42},
		{"ten billion acquisitions", 10_000_000_000},
		{"counter just below the clock", now - 1},
		{"counter above the clock", now + 1_000_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, elsewhere := uniqueKey(t), uniqueKey(t)+":elsewhere"
			e.rdb.Set(ctx, lockkeys.Fence(key), tc.counter, 0)
			// A holder of the old version wrote with the counter's last fence, beside the lock
			// and elsewhere.
			data := besideLock(key)
			if err := n.FencedSet(ctx, key, tc.counter, data, "old version", 0); err != nil {
				t.Fatal(err)
			}
			g := n.Guard(nil)
			if err := g.Set(ctx, tc.counter, elsewhere, "old version", 0); err != nil {
				t.Fatal(err)
			}
			l, err := n.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx)
			if l.Fence() <= tc.counter {
				t.Fatalf("fence after the upgrade = %d, not above the counter %d", l.Fence(), tc.counter)
			}
			if got, _ := e.rdb.Get(ctx, lockkeys.Fence(key)).Result(); got != strconv.FormatInt(l.Fence(), 10) {
				t.Errorf("fence key holds %q, want %d as a plain integer", got, l.Fence())
			}
			// Beside the lock the old holder is refused at once; elsewhere once the new
			// owner claimed the key.
			if err := n.FencedSet(ctx, key, tc.counter, data, "stale", 0); !errors.Is(err, ErrStaleFence) {
				t.Errorf("old holder's write after the upgrade = %v, want ErrStaleFence", err)
			}
			if err := n.FencedSet(ctx, key, l.Fence(), data, "new version", 0); err != nil {
				t.Errorf("new owner's write: %v", err)
			}
			if err := g.Claim(ctx, l.Fence(), elsewhere); err != nil {
				t.Errorf("new owner's claim: %v", err)
			}
			if err := g.Set(ctx, tc.counter, elsewhere, "stale", 0); !errors.Is(err, ErrStaleFence) {
				t.Errorf("old holder's write elsewhere after the new owner's claim = %v, want ErrStaleFence", err)
			}
		})
	}
}

// TestFencesRiseAcrossRestart: a Redis restart without persistence loses every fence key; the
// next fence is still above the last one before the restart (an INCR counter restarted at 1).
func TestFencesRiseAcrossRestart(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnv(t, srv.Addr)
	ctx := context.Background()
	n := e.namespace(t, "restart", Policy{TTL: time.Minute, DisableRenewal: true, Fencing: true})
	key := "restart:job:1"
	before, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	if e.rdb.Exists(ctx, key, lockkeys.Fence(key)).Val() != 0 {
		t.Fatal("the restarted server kept keys")
	}
	after, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if after.Fence() <= before.Fence() {
		t.Errorf("fence after the restart = %d, want above %d", after.Fence(), before.Fence())
	}
	if err := before.Release(ctx); !errors.Is(err, ErrNotOwned) {
		t.Errorf("release of the lease from before the restart = %v, want ErrNotOwned", err)
	}
	if err := after.Release(ctx); err != nil {
		t.Error(err)
	}
}

// TestWriteFenceRetention: with a retention, write-fence records expire, and a write to a key
// without a record is applied only if its fence is younger than the retention.
func TestWriteFenceRetention(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	const retention = time.Hour
	n := e.namespace(t, "retention", Policy{TTL: time.Minute, Fencing: true, WriteFenceRetention: retention})
	kept := e.namespace(t, "kept", Policy{TTL: time.Minute, Fencing: true})
	hourAgo := serverMicros(t, e.rdb) - int64(retention/time.Microsecond)
	for _, tc := range []struct {
		name    string
		ns      *Namespace
		record  int64 // 0: no record
		fence   int64
		applied bool
	}{
		{"fresh fence, no record", n, 0, hourAgo + int64(time.Minute/time.Microsecond), true},
		{"fence older than the retention, no record", n, 0, hourAgo - int64(time.Minute/time.Microsecond), false},
		{"counter fence, no record", n, 0, 7, false},
		{"old fence, not older than the record", n, 5, 7, true},
		{"fence older than the record", n, 9, 7, false},
		{"without retention, any fence and no record", kept, 0, 7, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := uniqueKey(t)
			if tc.record > 0 {
				e.rdb.Set(ctx, lockkeys.WriteFence(key), tc.record, 0)
			}
			err := tc.ns.Guard(nil).Set(ctx, tc.fence, key, "v", 0)
			if tc.applied && err != nil || !tc.applied && !errors.Is(err, ErrStaleFence) {
				t.Fatalf("Guard.Set = %v, want applied=%v", err, tc.applied)
			}
			if !tc.applied {
				return
			}
			pttl := e.rdb.PTTL(ctx, lockkeys.WriteFence(key)).Val()
			switch {
			case tc.ns == kept && pttl != -time.Nanosecond:
				t.Errorf("record PTTL = %v, want no expiry", pttl)
			case tc.ns == n && (pttl <= retention || pttl > retention+writeFenceSlack):
				t.Errorf("record PTTL = %v, want in (%v, %v]", pttl, retention, retention+writeFenceSlack)
			}
		})
	}
}

func TestFenceRetentionValidation(t *testing.T) {
	for _, p := range []Policy{{FenceRetention: -1}, {WriteFenceRetention: -time.Second}, {WriteFenceRetention: time.Microsecond}} {
		if _, err := p.withDefaults(); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("withDefaults(%+v) = %v, want ErrInvalidPolicy", p, err)
		}
	}
}
