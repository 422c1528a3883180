package peertest

import (
	"context"
	"testing"
	"time"

	"github.com/bsm/redislock"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// waiters is lock_waiters{jobs}, and whether the series is there at all.
func (e *env) waiters(t *testing.T) (float64, bool) {
	t.Helper()
	s := testkit.Gathered(t, e.reg, "lock_waiters", "lock_namespace", ns)
	if len(s) == 0 {
		return 0, false
	}
	return s[0].GetGauge().GetValue(), true
}

// Twenty goroutines blocked on one key through bsm/redislock with a retry strategy read 20
// waiters while the key is held, and 0 once each has taken and released it.
func TestRedislockTwentyWaiters(t *testing.T) {
	e := newEnv(t, "jobs:*")
	locker := redislockEnv(t, e, nil)
	ctx := context.Background()
	holder, err := locker.Obtain(ctx, "jobs:1", 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, present := e.waiters(t); present {
		t.Fatal("lock_waiters reported before any caller waited")
	}
	const callers = 20
	errs := make(chan error, callers)
	for range callers {
		go func() {
			l, err := locker.Obtain(ctx, "jobs:1", 30*time.Second,
				&redislock.Options{RetryStrategy: redislock.LinearBackoff(20 * time.Millisecond)})
			if err == nil {
				err = l.Release(ctx)
			}
			errs <- err
		}()
	}
	e.eventually(t, "20 waiters", func() bool { v, _ := e.waiters(t); return v == callers })
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	e.check(t, want{"lock_waiters", "", 0}, want{"lock_acquire_wait_seconds", "acquired", callers + 1},
		want{"lock_acquire_wait_seconds", "busy", 0}, want{"lock_held", "", 0})
}
