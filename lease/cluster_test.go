package lease

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Test 11: acquire, renew, release and fencing behave the same on a real 3-master Redis
// Cluster, for keys spread over the masters, with and without hash tags.
func TestClusterBehaviour(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{reg: reg, c: c}
	// Generous bounds: the test is about where commands go, not how fast; RenewTimeout also
	// bounds FencedSet, and "no failed renew" must not depend on the machine's load.
	n := e.namespace(t, "scheduler", Policy{TTL: 30 * time.Second, RenewInterval: 100 * time.Millisecond,
		RenewTimeout: 10 * time.Second, AcquireTimeout: 10 * time.Second, ReleaseTimeout: 10 * time.Second, Fencing: true})

	keys := []string{"scheduler:job:1", "scheduler:job:2", "scheduler:job:3", "scheduler:job:4",
		"{tenant-a}:job:5", "job:{tenant-b}:6", "a{b"}
	masters := map[string]bool{}
	for _, key := range keys {
		keySlot := slotOf(t, rdb, key)
		if got := slotOf(t, rdb, lockkeys.Fence(key)); got != keySlot {
			t.Errorf("lockkeys.Fence(%q) = %q is in slot %d, the key in %d", key, lockkeys.Fence(key), got, keySlot)
		}
		if got := slotOf(t, rdb, lockkeys.WriteFence(key)); got != keySlot {
			t.Errorf("lockkeys.WriteFence(%q) is in slot %d, the key in %d", key, got, keySlot)
		}
		masters[cluster.MasterFor(t, key).Addr] = true

		l, err := n.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("Acquire(%q) on the cluster: %v", key, err)
		}
		if l.Fence() <= 0 {
			t.Errorf("first fence of %q = %d, want a fence", key, l.Fence())
		}
		if _, err := n.TryAcquire(ctx, key); !errors.Is(err, ErrBusy) {
			t.Errorf("second acquire of %q = %v, want ErrBusy", key, err)
		}
		if err := n.release(ctx, leaseID{key: key, token: "wrong-token", keyArg: key, tokenArg: "wrong-token"}, time.Now().Add(time.Second)); !errors.Is(err, ErrNotOwned) {
			t.Errorf("wrong-token release of %q = %v", key, err)
		}
		if err := l.Renew(ctx); err != nil {
			t.Errorf("Renew(%q): %v", key, err)
		}
		if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "v1", time.Minute); err != nil {
			t.Errorf("FencedSet for %q: %v", key, err)
		}
		if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "v2", time.Minute); err != nil {
			t.Errorf("repeated FencedSet for %q: %v", key, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release(%q): %v", key, err)
		}
		l2, err := n.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("re-acquire %q: %v", key, err)
		}
		if l2.Fence() <= l.Fence() {
			t.Errorf("second fence of %q = %d, want above the first, %d", key, l2.Fence(), l.Fence())
		}
		if err := n.FencedSet(ctx, key, l2.Fence(), besideLock(key), "v3", time.Minute); err != nil {
			t.Errorf("newer owner's FencedSet for %q: %v", key, err)
		}
		if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "stale", time.Minute); !errors.Is(err, ErrStaleFence) {
			t.Errorf("stale FencedSet for %q = %v", key, err)
		}
		if got := rdb.Get(ctx, besideLock(key)).Val(); got != "v3" {
			t.Errorf("data of %q = %q after the stale write, want v3", key, got)
		}
		if err := l2.Release(ctx); err != nil {
			t.Errorf("Release(%q): %v", key, err)
		}
	}
	if len(masters) < 2 {
		t.Errorf("keys landed on %d master(s); the test needs them spread", len(masters))
	}

	// Keys with '}' outside a hash tag are why fenced namespaces reject them: their wrapped
	// fence key lands on another slot.
	for _, key := range []string{"a}b", "{}job:7"} {
		if slotOf(t, rdb, lockkeys.Fence(key)) == slotOf(t, rdb, key) {
			t.Errorf("%q: fence key shares the slot after all; sameSlotCompanion is too strict", key)
		}
		if _, err := n.Acquire(ctx, key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Acquire(%q) = %v, want ErrInvalidKey", key, err)
		}
	}

	// The background renewer works through cluster redirection too.
	l, err := n.Acquire(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "background renews on the cluster", func() bool {
		return e.metric(t, "lock_renewals_total", namespaceLabel, "scheduler", "outcome", "ok") >= float64(len(keys))+2
	})
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	k := float64(len(keys))
	e.wantMetrics(t, "scheduler", map[string]float64{
		"lock_acquire_wait_seconds/acquired": 2*k + 1,
		"lock_acquire_wait_seconds/busy":     k,
		"lock_releases_total/ok":             2*k + 1,
		"lock_releases_total/not_owned":      k,
		"lock_fenced_writes_total/applied":   3 * k,
		"lock_fenced_writes_total/rejected":  k,
		"lock_renewals_total/failed":         0,
		"lock_held":                          0,
	})
}

func slotOf(t *testing.T, rdb *redis.ClusterClient, key string) int64 {
	t.Helper()
	slot, err := rdb.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("CLUSTER KEYSLOT %q: %v", key, err)
	}
	return slot
}
