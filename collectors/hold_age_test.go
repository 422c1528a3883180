package collectors

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// A zombie holder (its renewer keeps the key alive, its work stalled) looks healthy by TTL and
// idle time; its hold age gives it away. On a real Redis, with lease recording holders: the
// longest-held locks are listed by hold age, oldest first, with the namespace's maximum and its
// declared limit; a lock without a holder record, or with one from before the acquisition time
// was recorded, has no hold age; a namespace that declares no maximum has no series (and its
// keys cost no GET).
func TestHeldAgesShowAZombieHolder(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	ctx := context.Background()

	lc, err := lease.New(c, lease.Options{Holder: "worker pid 1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	ns, err := lc.Declare("jobs", lease.Policy{TTL: time.Second, RenewInterval: 200 * time.Millisecond, RecordHolder: true})
	if err != nil {
		t.Fatal(err)
	}
	zombie, err := ns.Acquire(ctx, "jobs:zombie")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Release(context.Background()) })
	time.Sleep(1500 * time.Millisecond) // past its TTL: only renewals keep it
	fresh, err := ns.Acquire(ctx, "jobs:fresh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fresh.Release(context.Background()) })
	// A lock of another library, and one whose holder record predates the acquisition time.
	for _, k := range []string{"jobs:plain", "jobs:legacy"} {
		if err := c.Set(ctx, k, "token", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, lockkeys.Holder("jobs:legacy"), "old-version pid 2", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}

	// Through the least-privilege ACL docs/exporter.md documents: it must allow the holder
	// records' GET and the TIME that ages them, and still no GET of a lock key.
	const password = "held-ages-acl"
	testkit.SetACL(t, srv, testkit.DocumentedACL(t, password))
	exporter := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: password, Protocol: 2})
	t.Cleanup(func() { _ = exporter.Close() })
	// Walked on every scrape, and served by the lock-key index (which keeps the acquisition
	// times and ages them at the scrape): the same figures.
	for _, mode := range []ScanMode{ModeWalk, ModeAuto} {
		t.Run(string(mode), func(t *testing.T) { checkHeldAges(t, exporter, mode) })
	}
}

func checkHeldAges(t *testing.T, exporter *redis.Client, mode ScanMode) {
	ctx := context.Background()
	s := newTestScanner(t, exporter, Options{TopK: 5, Mode: mode, Namespaces: []Namespace{
		{Name: "jobs", Pattern: "jobs:*", ExpectedMaxHold: time.Hour},
		{Name: "undeclared", Pattern: "jobs:*"},
	}})
	if mode == ModeAuto {
		waitCurrent(t, s)
	}
	got := gather(t, s.Collector(ctx))
	if v := only(t, got, "lock_exporter_up", ""); v != 1 {
		t.Fatalf("lock_exporter_up = %v through the documented ACL", v)
	}

	held := map[string]float64{}
	for _, s := range got["lock_key_held_seconds"] {
		if s.labels[nsLabel] != "jobs" {
			t.Errorf("lock_key_held_seconds%v: only the namespace that declares expected_max_hold is read", s.labels)
		}
		held[s.labels["key"]] = s.value
	}
	if len(held) != 2 {
		t.Fatalf("lock_key_held_seconds for %v, want jobs:zombie and jobs:fresh only", held)
	}
	if z, f := held["jobs:zombie"], held["jobs:fresh"]; z < 1.4 || z > 10 || f < 0 || f > z-1 {
		t.Errorf("hold ages zombie %vs, fresh %vs; want the zombie's ≥ 1.4s and a second above the fresh one's", z, f)
	}
	if v := only(t, got, "lock_key_held_max_seconds", "jobs"); v != held["jobs:zombie"] {
		t.Errorf("lock_key_held_max_seconds = %v, want the zombie's %v", v, held["jobs:zombie"])
	}
	if v := only(t, got, "lock_expected_max_hold_seconds", "jobs"); v != 3600 {
		t.Errorf("lock_expected_max_hold_seconds = %v, want 3600", v)
	}
	for _, s := range got["lock_key_held_max_seconds"] {
		if s.labels[nsLabel] == "undeclared" {
			t.Error("lock_key_held_max_seconds for a namespace without expected_max_hold")
		}
	}
	// The zombie's TTL and idle time look healthy: its renewer keeps touching it.
	for _, s := range got["lock_key_idle_seconds"] {
		if s.labels["key"] == "jobs:zombie" && s.value > 1 {
			t.Errorf("zombie idle %vs: the renewer should keep it fresh", s.value)
		}
	}
}
