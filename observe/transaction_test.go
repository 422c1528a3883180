package observe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A lock command in a transaction that a WATCHed key's change aborted did nothing: it counts
// no acquire (it counted an error) and no hold; one in a transaction that ran counts by its
// reply.
func TestAbortedTransactionCountsNothing(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeOverlap(t, rdb)
	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		if err := rdb.Set(ctx, "jobs:watched", "changed", 0).Err(); err != nil { // another connection
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			return p.SetNX(ctx, "jobs:1", "secret-value-aborted", 10*time.Second).Err()
		})
		return err
	}, "jobs:watched")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("transaction = %v, want it aborted", err)
	}
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		return p.SetNX(ctx, "jobs:2", "secret-value-ran", 10*time.Second).Err()
	}); err != nil {
		t.Fatal(err)
	}
	for outcome, want := range map[string]uint64{"acquired": 1, "error": 0, "busy": 0} {
		if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", outcome); n != want {
			t.Errorf("lock_acquire_wait_seconds{%s} count = %d, want %d", outcome, n, want)
		}
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
		t.Errorf("lock_held = %v, want 1", got)
	}
}
