package observe

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// waiters is lock_waiters{jobs}, and whether the series is there at all.
func waiters(t *testing.T, g prometheus.Gatherer) (float64, bool) {
	t.Helper()
	s := series(t, g, "lock_waiters", "jobs", "")
	if len(s) == 0 {
		return 0, false
	}
	return s[0].GetGauge().GetValue(), true
}

func wantWaiters(t *testing.T, g prometheus.Gatherer, want float64) {
	t.Helper()
	if got, present := waiters(t, g); !present || got != want {
		t.Errorf("lock_waiters = %v (present %v), want %v", got, present, want)
	}
}

// A value retrying its acquire is a waiter from its second failed try until it acquires, and
// stops counting when no try follows within three of its retry intervals (a try counts it
// again); a single busy attempt is no waiter; a given-up wait counts no more.
func TestWaitersFromRetries(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{GiveUpAfter: time.Second})
	ms := time.Millisecond
	do(o, clock, ms, ok, acquireArgs("jobs:1", "A")...)
	if _, present := waiters(t, reg); present {
		t.Fatal("lock_waiters reported before any caller waited")
	}
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "C")...) // C tries once: no waiter
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...)
	if _, present := waiters(t, reg); present {
		t.Fatal("lock_waiters reported after single busy attempts")
	}
	clock.advance(9 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...) // 10ms after B's first
	wantWaiters(t, reg, 1)

	clock.advance(25 * ms) // 25ms after B's last try ended: within 3 × 10ms
	wantWaiters(t, reg, 1)
	clock.advance(6 * ms) // 31ms
	wantWaiters(t, reg, 0)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...) // B retries after all
	wantWaiters(t, reg, 1)

	do(o, clock, ms, one, releaseArgs("jobs:1", "A")...)
	do(o, clock, ms, ok, acquireArgs("jobs:1", "B")...)
	wantWaiters(t, reg, 0)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired = %d, want 2", n)
	}

	// D retries twice and goes silent: it lapses, and its wait is given up after GiveUpAfter.
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "D")...)
	clock.advance(20 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "D")...)
	wantWaiters(t, reg, 1)
	clock.advance(1100 * ms)
	wantWaiters(t, reg, 0)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 2 {
		t.Errorf("busy = %d (C and D given up), want 2", n)
	}
}

// The namespace's longest retry interval bounds every waiter's silence: a library's retry
// delay varies (redsync draws it between 50 and 250 ms), and one caller's short first interval
// must not make its next, longer one look like giving up.
func TestWaitersLapseByTheNamespacesLongestInterval(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{GiveUpAfter: time.Second})
	ms := time.Millisecond
	do(o, clock, ms, ok, acquireArgs("jobs:1", "A")...)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...)
	clock.advance(199 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...) // B: 200ms apart
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "E")...)
	clock.advance(49 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "E")...) // E: 50ms apart
	// E silent for 241ms: more than 3 × 50, less than 3 × 200.
	clock.advance(240 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...)
	wantWaiters(t, reg, 2)
}

// Callers sharing one constant value cannot be told apart: once a value is refused a key it
// holds, the namespace counts no waiter (the series stays absent), on a real server.
func TestConstantValueLocksCountNoWaiters(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(obs.Hook())
	if ok, err := rdb.SetNX(ctx, "jobs:1", "1", time.Minute).Result(); err != nil || !ok {
		t.Fatalf("SetNX: %v %v", ok, err)
	}
	time.Sleep(10 * time.Millisecond) // the refused attempts start after the acquisition's round
	for range 3 {
		if ok, err := rdb.SetNX(ctx, "jobs:1", "1", time.Minute).Result(); err != nil || ok {
			t.Fatalf("second SetNX: %v %v, want refused", ok, err)
		}
	}
	if v, present := waiters(t, reg); present {
		t.Errorf("lock_waiters = %v for callers sharing a constant value, want no series", v)
	}
}

// A wait given up shows as busy in the very collection of lock_acquire_wait_seconds that is due
// to see it, not one scrape later: a registry collects its families concurrently, so the family
// cannot rely on lock_held's or lock_waiters' sweep having run first. Collected alone here.
func TestGivenUpWaitShowsInItsOwnCollection(t *testing.T) {
	o, _, clock := newTestObserver(t, Options{GiveUpAfter: time.Second})
	ms := time.Millisecond
	do(o, clock, ms, ok, acquireArgs("jobs:1", "A")...)
	do(o, clock, ms, nilReply, acquireArgs("jobs:1", "B")...) // B tries once and goes silent
	clock.advance(1100 * ms)
	prom, isProm := o.metrics.(*promPath)
	if !isProm {
		t.Fatalf("the observer's metrics are %T, want the Prometheus path", o.metrics)
	}
	waitOnly := prometheus.NewRegistry()
	waitOnly.MustRegister(prom.fams.AcquireWait)
	if n, _ := histogram(t, waitOnly, "lock_acquire_wait_seconds", "jobs", "busy"); n != 1 {
		t.Errorf("busy = %d in the first collection after GiveUpAfter, want 1 (B given up)", n)
	}
}
