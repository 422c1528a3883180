package peertest

import (
	"context"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/prometheus/client_golang/prometheus"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/observe"
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

// A Redlock's waiters: redsync over three servers retries each caller's try with one value, and
// a try counts by its quorum, so ten callers blocked on one lock read 10 waiters, then 0.
func TestRedsyncRedlockWaiters(t *testing.T) {
	e := &env{reg: prometheus.NewRegistry()}
	obs, err := observe.New(observe.Options{Registerer: e.reg,
		Namespaces: []observe.Namespace{{Name: ns, Pattern: "jobs:*"}}, GiveUpAfter: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.obs = obs
	pools := make([]redis.Pool, 3)
	for i := range pools {
		srv := redistest.Start(t)
		rdb := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = rdb.Close() })
		rdb.AddHook(obs.Hook())
		pools[i] = goredis.NewPool(rdb)
	}
	rs := redsync.New(pools...)
	mutex := func() *redsync.Mutex {
		return rs.NewMutex("jobs:1", redsync.WithExpiry(30*time.Second), redsync.WithTries(2000),
			redsync.WithRetryDelay(20*time.Millisecond))
	}
	holder := mutex()
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	const callers = 10
	errs := make(chan error, callers)
	for range callers {
		go func() {
			m := mutex()
			err := m.Lock()
			if err == nil {
				_, err = m.Unlock()
			}
			errs <- err
		}()
	}
	e.eventually(t, "10 waiters", func() bool { v, _ := e.waiters(t); return v == callers })
	if _, err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	e.check(t, want{"lock_waiters", "", 0}, want{"lock_acquire_wait_seconds", "acquired", callers + 1},
		want{"lock_releases_total", "ok", callers + 1}, want{"lock_releases_total", "not_owned", 0},
		want{"lock_held", "", 0})
}
