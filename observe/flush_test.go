package observe

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// FLUSHDB and FLUSHALL (a test suite's usual teardown) remove every lock key of the server: the
// holds on it end at the reply, in every namespace, observed in lock_held_seconds and counted
// as no release, as a DEL of the keys would. A lock held through another hook (another server)
// stays held.
func TestFlushEndsTheHoldsOfItsServer(t *testing.T) {
	ctx := context.Background()
	for _, flush := range []struct {
		name string
		run  func(rdb redis.Cmdable) error
	}{
		{"flushdb", func(rdb redis.Cmdable) error { return rdb.FlushDB(ctx).Err() }},
		{"flushall async", func(rdb redis.Cmdable) error { return rdb.FlushAllAsync(ctx).Err() }},
		{"flushdb in a transaction", func(rdb redis.Cmdable) error {
			_, err := rdb.(*redis.Client).TxPipelined(ctx, func(p redis.Pipeliner) error { return p.FlushDB(ctx).Err() })
			return err
		}},
	} {
		t.Run(flush.name, func(t *testing.T) {
			rdb := redistest.Start(t).Client(t)
			reg := observeOverlap(t, rdb)
			for _, k := range []string{"jobs:1", "jobs:2", "jobs:urgent:3"} {
				if ok, err := rdb.SetNX(ctx, k, "secret-value-flush-"+k, 10*time.Second).Result(); err != nil || !ok {
					t.Fatalf("acquire %s: %v %v", k, ok, err)
				}
			}
			if got := value(t, reg, "lock_held", "jobs", ""); got != 3 {
				t.Fatalf("lock_held{jobs} = %v, want 3", got)
			}
			if err := flush.run(rdb); err != nil {
				t.Fatal(err)
			}
			wantHoldsEndedWithoutRelease(t, reg, "flush", map[string]uint64{"jobs": 3, "urgent": 1})
			// Acquired again after the flush: held once, not twice.
			if ok, err := rdb.SetNX(ctx, "jobs:1", "secret-value-flush-again", 10*time.Second).Result(); err != nil || !ok {
				t.Fatalf("acquire after the flush: %v %v", ok, err)
			}
			if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
				t.Errorf("lock_held{jobs} = %v after acquiring again, want 1", got)
			}
		})
	}
}

// A flush through one hook (one server) leaves the holds taken through another alone.
func TestFlushLeavesOtherServersHolds(t *testing.T) {
	ctx := context.Background()
	a, b := redistest.Start(t).Client(t), redistest.Start(t).Client(t)
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, GiveUpAfter: 100 * time.Millisecond,
		Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	a.AddHook(obs.Hook())
	b.AddHook(obs.Hook())
	if err := a.SetNX(ctx, "jobs:1", "secret-value-a", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.SetNX(ctx, "jobs:2", "secret-value-b", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	// Each server's first try is decided GiveUpAfter after its reply (its group is not known).
	time.Sleep(300 * time.Millisecond)
	if got := value(t, reg, "lock_held", "jobs", ""); got != 2 {
		t.Fatalf("lock_held{jobs} = %v, want 2", got)
	}
	if err := a.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
		t.Errorf("lock_held{jobs} = %v after flushing one of two servers, want 1", got)
	}
}
