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

// MULTI … EXEC sent by hand through a plain pipeline: go-redis gives each queued command its
// QUEUED answer (a SET NX's reads as refused), so the outcome is read from EXEC's reply. A
// DISCARDed block counts nothing.
func TestHandMadeTransactionInAPipeline(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Start(t).Client(t)
	reg := observeOverlap(t, rdb)
	if err := rdb.SetNX(ctx, "jobs:1", "secret-value-a", 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := rdb.Pipeline()
	pipe.Do(ctx, "multi")
	pipe.SetNX(ctx, "jobs:1", "secret-value-b", 10*time.Second) // refused: A holds it
	pipe.SetNX(ctx, "jobs:2", "secret-value-c", 10*time.Second) // acquired
	pipe.Do(ctx, "exec")
	pipe.Do(ctx, "multi")
	pipe.SetNX(ctx, "jobs:3", "secret-value-d", 10*time.Second) // discarded
	pipe.Do(ctx, "discard")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired = %d, want 2 (A's and C's)", n)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 2 {
		t.Errorf("lock_held = %v, want 2", got)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "error"); n != 0 {
		t.Errorf("error = %d, want 0", n)
	}
	if n, err := rdb.Exists(ctx, "jobs:3").Result(); err != nil || n != 0 {
		t.Fatalf("the discarded SET ran: %v %v", n, err)
	}
}
