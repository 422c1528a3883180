package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// twentyWaiters holds key, starts 20 Acquires of it through acquire and waits until read()
// reports 20 waiters; then it releases the lock, lets every waiter take and release it in turn,
// and checks read() falls back to 0.
func twentyWaiters(t *testing.T, n *Namespace, read func() float64) {
	t.Helper()
	ctx := context.Background()
	key := uniqueKey(t)
	holder, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 20
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := n.Acquire(ctx, key)
			if err == nil {
				err = l.Release(ctx)
			}
			errs <- err
		}()
	}
	testkit.Eventually(t, 10*time.Second, "20 waiters", func() bool { return read() == waiters })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
	}
	if got := read(); got != 0 {
		t.Errorf("lock_waiters after every waiter got the lock = %v, want 0", got)
	}
}

// 20 goroutines blocked on one key read 20 waiters, whether they poll Redis or queue on the
// local mutex. (The OTel path's twin is in integration/otel.)
func TestWaitersCountsBlockedCallers(t *testing.T) {
	policy := Policy{AcquireTimeout: time.Minute, RetryBackoff: 5 * time.Millisecond}
	for _, local := range []bool{false, true} {
		p := policy
		p.LocalMutex = local
		t.Run(map[bool]string{false: "redis", true: "local_mutex"}[local], func(t *testing.T) {
			e := newEnv(t, sharedAddr)
			n := e.namespace(t, "jobs", p)
			twentyWaiters(t, n, func() float64 { return e.metric(t, "lock_waiters", namespaceLabel, "jobs") })
		})
	}
}

// An uncontended acquire is no wait, and a TryAcquire that finds the lock busy never waits: the
// gauge stays 0 through both.
func TestWaitersIgnoresCallsThatDoNotWait(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "jobs", Policy{})
	ctx := context.Background()
	key := uniqueKey(t)
	l, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if _, err := n.TryAcquire(ctx, key); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryAcquire of a held key: %v, want ErrBusy", err)
	}
	if got := e.metric(t, "lock_waiters", namespaceLabel, "jobs"); got != 0 {
		t.Errorf("lock_waiters = %v, want 0", got)
	}
}

// lock_held_oldest_seconds is the age of the oldest lease held at the scrape: it grows while
// the lease is held, follows the next-oldest when the oldest is released, and is 0 once none is
// held. (The OTel path's twin is in integration/otel.)
func TestHeldOldestFollowsTheOldestLease(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "jobs", Policy{})
	oldestFollowsTheOldestLease(t, n, func() float64 { return e.metric(t, "lock_held_oldest_seconds", namespaceLabel, "jobs") })
}

// oldestFollowsTheOldestLease takes two leases of n a moment apart and releases them in turn,
// checking the oldest hold that read reports at each step.
func oldestFollowsTheOldestLease(t *testing.T, n *Namespace, read func() float64) {
	t.Helper()
	ctx := context.Background()
	if got := read(); got != 0 {
		t.Fatalf("before any lease: %v, want 0", got)
	}
	start := time.Now()
	first, err := n.Acquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	secondAt := time.Now()
	second, err := n.Acquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	got := read()
	if min, max := 0.5, time.Since(start).Seconds(); got < min || got > max {
		t.Errorf("with two leases: %v, want the first's age in [%v, %v]", got, min, max)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got = read()
	if min, max := 0.2, time.Since(secondAt).Seconds(); got < min || got > max {
		t.Errorf("after the oldest's release: %v, want the second's age in [%v, %v]", got, min, max)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != 0 {
		t.Errorf("with no lease held: %v, want 0", got)
	}
}
