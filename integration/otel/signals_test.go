package otel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// On the OTel path too, 20 goroutines blocked on one key read 20 waiters (lock_waiters, an
// observable up-down counter), whether they poll Redis or queue on the local mutex, and 0 once
// each has had its turn.
func TestLeaseOTelWaitersCountBlockedCallers(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(map[bool]string{false: "redis", true: "local_mutex"}[local], func(t *testing.T) {
			e := newOTelEnv(t)
			n, err := e.c.Declare("jobs", lease.Policy{AcquireTimeout: time.Minute, RetryBackoff: 5 * time.Millisecond, LocalMutex: local})
			if err != nil {
				t.Fatal(err)
			}
			waiters := func() float64 { return e.series(t)["lock_waiters{jobs,}"] }
			ctx := context.Background()
			key := uniqueKey(t)
			holder, err := n.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 20 {
				wg.Go(func() {
					l, err := n.Acquire(ctx, key)
					if err == nil {
						err = l.Release(ctx)
					}
					if err != nil {
						t.Errorf("waiter: %v", err)
					}
				})
			}
			testkit.Eventually(t, 10*time.Second, "20 waiters", func() bool { return waiters() == 20 })
			if err := holder.Release(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if got := waiters(); got != 0 {
				t.Errorf("lock_waiters after every waiter got the lock = %v, want 0", got)
			}
		})
	}
}

// lock_held_oldest_seconds on the OTel path: the age of the oldest lease at collection, 0 when
// none is held.
func TestLeaseOTelHeldOldest(t *testing.T) {
	e := newOTelEnv(t)
	n, err := e.c.Declare("jobs", lease.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	oldest := func() float64 { return e.series(t)["lock_held_oldest_seconds{jobs,}"] }
	ctx := context.Background()
	if got := oldest(); got != 0 {
		t.Fatalf("before any lease: %v, want 0", got)
	}
	start := time.Now()
	l, err := n.Acquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got, max := oldest(), time.Since(start).Seconds(); got < 0.3 || got > max {
		t.Errorf("with one lease held 300ms: %v, want in [0.3, %v]", got, max)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := oldest(); got != 0 {
		t.Errorf("with no lease held: %v, want 0", got)
	}
}
