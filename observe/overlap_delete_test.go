package observe

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// observeOverlap hooks onto rdb an Observer whose namespaces "jobs" (jobs:*) and "urgent"
// (jobs:urgent:*) overlap, and returns its registry.
func observeOverlap(t *testing.T, rdb *redis.Client) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{
		{Name: "jobs", Pattern: "jobs:*"}, {Name: "urgent", Pattern: "jobs:urgent:*"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rdb.AddHook(obs.Hook())
	return reg
}

// A key belongs to every namespace whose pattern matches it, as the exporter counts it: a lock
// on jobs:urgent:1 is acquired, renewed and released in both "jobs" and "urgent".
func TestKeyCountsInEveryMatchingNamespace(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeOverlap(t, rdb)
	const v = "secret-value-overlap-1"
	if ok, err := rdb.SetNX(ctx, "jobs:urgent:1", v, 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if err := redis.NewScript(testRefresh).Run(ctx, rdb, []string{"jobs:urgent:1"}, v, 10000).Err(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"jobs", "urgent"} {
		if got := value(t, reg, "lock_held", ns, ""); got != 1 {
			t.Errorf("lock_held{%s} = %v while held, want 1", ns, got)
		}
	}
	if n, _ := redis.NewScript(testRelease).Run(ctx, rdb, []string{"jobs:urgent:1"}, v).Int(); n != 1 {
		t.Fatal("release failed")
	}
	// Only "jobs" matches jobs:2.
	rdb.SetNX(ctx, "jobs:2", v, 10*time.Second)
	for _, c := range []struct {
		ns       string
		acquired uint64
		held     float64
	}{{"jobs", 2, 1}, {"urgent", 1, 0}} {
		if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", c.ns, "acquired"); n != c.acquired {
			t.Errorf("acquisitions{%s} = %d, want %d", c.ns, n, c.acquired)
		}
		if got := value(t, reg, "lock_held", c.ns, ""); got != c.held {
			t.Errorf("lock_held{%s} = %v, want %v", c.ns, got, c.held)
		}
		if got := value(t, reg, "lock_renewals_total", c.ns, "ok"); got != 1 {
			t.Errorf("renewals{%s} = %v, want 1", c.ns, got)
		}
		if got := value(t, reg, "lock_releases_total", c.ns, "ok"); got != 1 {
			t.Errorf("releases{%s} = %v, want 1", c.ns, got)
		}
	}
}

// A plain DEL or UNLINK of held keys (a cleanup job, a test's teardown) ends their holds at
// once, observed in the hold-time histogram, without counting releases; keys that are not held
// and keys outside every namespace change nothing.
func TestDeleteOfHeldKeyEndsTheHold(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeOverlap(t, rdb)
	for i, k := range []string{"jobs:1", "jobs:2", "jobs:3", "jobs:urgent:4"} {
		if ok, err := rdb.SetNX(ctx, k, "secret-value-del-"+k, 10*time.Second).Result(); err != nil || !ok {
			t.Fatalf("acquire %d: %v %v", i, ok, err)
		}
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 4 {
		t.Fatalf("lock_held{jobs} = %v, want 4", got)
	}
	if err := rdb.Del(ctx, "jobs:1").Err(); err != nil {
		t.Fatal(err)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 3 {
		t.Fatalf("lock_held{jobs} = %v after DEL, want 3", got)
	}
	// Multi-key, with a key nobody holds and one outside every namespace.
	if err := rdb.Unlink(ctx, "jobs:2", "jobs:urgent:4", "jobs:none", "other:1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "jobs:3", "jobs:none").Err(); err != nil {
		t.Fatal(err)
	}
	wantHoldsEndedWithoutRelease(t, reg, "DEL", map[string]uint64{"jobs": 4, "urgent": 1})
}
