package observe

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A lock's identity is its key. Hand-made locks that write one constant value under
// many keys are as many locks; another process writing the same value, refused on a held key,
// is busy, not the minority of a quorum.
func TestConstantValueLocksAreOnePerKey(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, GiveUpAfter: 200 * time.Millisecond,
		Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Two processes' clients, one Observer each would do as well; one Observer sees both here,
	// through one hook, as clients of one server share one (docs/observe.md).
	first, second := srv.Client(t), srv.Client(t)
	hook := obs.Hook()
	first.AddHook(hook)
	second.AddHook(hook)
	for i := range 10 {
		if ok, err := first.SetNX(ctx, fmt.Sprintf("jobs:%d", i), "1", time.Minute).Result(); err != nil || !ok {
			t.Fatalf("SetNX jobs:%d: %v %v", i, ok, err)
		}
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 10 {
		t.Errorf("lock_held = %v after ten keys were locked, want 10", got)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 10 {
		t.Errorf("acquired = %d, want 10", n)
	}
	time.Sleep(10 * time.Millisecond) // the refused attempts start after the acquisitions' round
	for i := range 5 {
		if ok, err := second.SetNX(ctx, fmt.Sprintf("jobs:%d", i), "1", time.Minute).Result(); err != nil || ok {
			t.Fatalf("second SetNX jobs:%d: %v %v, want refused", i, ok, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // past GiveUpAfter: the waits end as busy at the next collection
	// The sweep that ends them runs inside lock_held's collection; a registry collects its
	// families concurrently, so the wait histogram may be read before that sweep in the same
	// scrape: the ended waits are certain to show from the scrape after it.
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 5 {
		t.Errorf("busy = %d after five refused attempts on held keys, want 5", n)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 10 {
		t.Errorf("lock_held = %v after the refused attempts, want 10", got)
	}
}

// lock_held is consistent within one scrape: locks whose keys expired are gone from the very
// first scrape after their expiry, with no lock command in between (the sweep runs inside
// lock_held's collection, not beside it).
func TestHeldGaugeSweptWithinTheScrape(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	for round := range 3 {
		reg := prometheus.NewRegistry()
		obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
		rdb.AddHook(obs.Hook())
		const locks = 5000
		pipe := rdb.Pipeline()
		for i := range locks {
			pipe.SetNX(ctx, fmt.Sprintf("jobs:%d:%d", round, i), fmt.Sprintf("v%d", i), time.Second)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		rdb.Close()
		if got := value(t, reg, "lock_held", "jobs", ""); got != locks {
			t.Fatalf("lock_held = %v right after %d acquisitions, want %d", got, locks, locks)
		}
		time.Sleep(1300 * time.Millisecond)
		if got := value(t, reg, "lock_held", "jobs", ""); got != 0 {
			t.Fatalf("round %d: lock_held = %v in the first scrape after every lock expired, want 0", round, got)
		}
	}
}
