package observe

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

var errTimeout = errors.New("i/o timeout")

func acquireArgs(key, value string) []string {
	return []string{"set", key, value, "nx", "px", "10000"}
}

func releaseArgs(key, value string) []string {
	return []string{"eval", testRelease, "1", key, value}
}

func refreshArgs(key, value string) []string {
	return []string{"eval", testRefresh, "1", key, value, "10000"}
}

func TestWaitRunsFromFirstBusyAttemptToOutcome(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{GiveUpAfter: time.Second})
	ms := time.Millisecond

	// Uncontended: the wait is the attempt's own round trip.
	do(o, clock, 2*ms, ok, acquireArgs("jobs:a", "A")...)
	if n, sum := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 1 || !near(sum, 0.002) {
		t.Fatalf("uncontended acquire: count %d sum %v, want 1 and 0.002", n, sum)
	}

	// B retries with the same value: busy, busy, acquired. One observation, from the start of
	// the first attempt to the end of the last.
	do(o, clock, ms, nilReply, acquireArgs("jobs:a", "B")...)
	clock.advance(100 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:a", "B")...)
	do(o, clock, ms, one, releaseArgs("jobs:a", "A")...)
	clock.advance(100 * ms)
	do(o, clock, ms, ok, acquireArgs("jobs:a", "B")...)
	if n, sum := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 || !near(sum, 0.002+0.204) {
		t.Fatalf("contended acquire: count %d sum %v, want 2 and %v", n, sum, 0.002+0.204)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 0 {
		t.Fatalf("a wait that ended acquired was also counted busy (%d)", n)
	}

	// C tries twice and gives up: busy once, first attempt to last, after GiveUpAfter.
	do(o, clock, ms, nilReply, acquireArgs("jobs:a", "C")...)
	clock.advance(50 * ms)
	do(o, clock, ms, nilReply, acquireArgs("jobs:a", "C")...)
	clock.advance(500 * ms)
	o.tracker.sweep(clock.now(), true)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 0 {
		t.Fatal("a wait was given up before GiveUpAfter passed")
	}
	clock.advance(600 * ms)
	o.tracker.sweep(clock.now(), true)
	if n, sum := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 1 || !near(sum, 0.052) {
		t.Fatalf("given-up wait: count %d sum %v, want 1 and 0.052", n, sum)
	}

	// D's attempt fails in transit: error, from its first busy attempt.
	do(o, clock, ms, nilReply, acquireArgs("jobs:a", "D")...)
	do(o, clock, 3*ms, Reply{Err: errTimeout}, acquireArgs("jobs:a", "D")...)
	if n, sum := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "error"); n != 1 || !near(sum, 0.004) {
		t.Fatalf("failed acquire: count %d sum %v, want 1 and 0.004", n, sum)
	}
}

func TestHoldLifecycle(t *testing.T) {
	tests := []struct {
		name         string
		run          func(o *Observer, clock *fakeClock)
		held         float64
		holds        uint64
		holdSum      float64
		relOK        float64
		relNotOwned  float64
		relError     float64
		renewOK      float64
		renewFailed  float64
		renewMissing float64
	}{
		{
			name: "acquire, refresh, release",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				c.advance(3 * time.Second)
				do(o, c, 0, one, refreshArgs("jobs:1", "A")...)
				c.advance(2 * time.Second)
				do(o, c, 0, one, releaseArgs("jobs:1", "A")...)
			},
			holds: 1, holdSum: 5, relOK: 1, renewOK: 1,
		},
		{
			name: "held until the TTL expires it, then a late release and refresh are not owned",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				c.advance(11 * time.Second)
				o.tracker.sweep(c.now(), true)
				do(o, c, 0, zero, refreshArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Int: -1, IsInt: true}, releaseArgs("jobs:1", "A")...)
			},
			holds: 1, holdSum: 10, relNotOwned: 1, renewMissing: 1,
		},
		{
			name: "a refresh that finds another owner ends the hold",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				c.advance(time.Second)
				do(o, c, 0, zero, refreshArgs("jobs:1", "A")...)
			},
			holds: 1, holdSum: 1, renewMissing: 1,
		},
		{
			name: "failed renew and release in transit keep the lock until its TTL",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Err: errTimeout}, refreshArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Err: errTimeout}, releaseArgs("jobs:1", "A")...)
			},
			held: 1, relError: 1, renewFailed: 1,
		},
		{
			name: "a refreshed lock outlives its first TTL",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				c.advance(8 * time.Second)
				do(o, c, 0, one, refreshArgs("jobs:1", "A")...)
				c.advance(8 * time.Second)
				o.tracker.sweep(c.now(), true)
			},
			held: 1, renewOK: 1,
		},
		{
			name: "NOSCRIPT is the client's cue to send EVAL, not an outcome",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Err: errors.New("NOSCRIPT No matching script. Please use EVAL.")},
					"evalsha", "e950836ed1e694540c503ef9972b8de518044d3b", "1", "jobs:1", "A")
			},
			held: 1,
		},
		{
			name: "a renew or release the holder called off is not a failure",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Err: fmt.Errorf("extend: %w", context.Canceled)}, refreshArgs("jobs:1", "A")...)
				do(o, c, 0, Reply{Err: context.Canceled}, releaseArgs("jobs:1", "A")...)
			},
			held: 1,
		},
		{
			name: "one value on one key on several servers is one lock (a quorum)",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				do(o, c, 0, nilReply, acquireArgs("jobs:1", "A")...) // the minority, same round
				do(o, c, 0, ok, acquireArgs("jobs:1", "A")...)
				c.advance(time.Second)
				do(o, c, 0, one, releaseArgs("jobs:1", "A")...)
				do(o, c, 0, one, releaseArgs("jobs:1", "A")...)
			},
			// Released on both servers: one release, as the holder sees it.
			holds: 1, holdSum: 1, relOK: 1,
		},
		{
			name: "one constant value on several keys is a lock per key",
			run: func(o *Observer, c *fakeClock) {
				do(o, c, 0, ok, acquireArgs("jobs:1", "1")...)
				do(o, c, 0, ok, acquireArgs("jobs:3", "1")...)
				c.advance(time.Second)
				do(o, c, 0, one, releaseArgs("jobs:1", "1")...)
				do(o, c, 0, one, releaseArgs("jobs:3", "1")...)
			},
			holds: 2, holdSum: 2, relOK: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, reg, clock := newTestObserver(t, Options{})
			tt.run(o, clock)
			checkJobs(t, reg,
				jobsValue{"lock_held", "", tt.held},
				jobsValue{"lock_releases_total", "ok", tt.relOK},
				jobsValue{"lock_releases_total", "not_owned", tt.relNotOwned},
				jobsValue{"lock_releases_total", "error", tt.relError},
				jobsValue{"lock_renewals_total", "ok", tt.renewOK},
				jobsValue{"lock_renewals_total", "failed", tt.renewFailed},
				jobsValue{"lock_renewals_total", "not_owned", tt.renewMissing},
			)
			if n, sum := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != tt.holds || !near(sum, tt.holdSum) {
				t.Errorf("lock_held_seconds count %d sum %v, want %d and %v", n, sum, tt.holds, tt.holdSum)
			}
			if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "busy"); n != 0 {
				t.Errorf("busy waits %d, want 0", n)
			}
		})
	}
}

func TestUnderivableSeriesStayAbsent(t *testing.T) {
	_, reg, _ := newTestObserver(t, Options{})
	for _, name := range []string{"lock_abandoned_total", "lock_fenced_writes_total"} {
		if s := series(t, reg, name, "jobs", ""); len(s) != 0 {
			t.Errorf("%s exists for an observed namespace; the wire cannot tell it", name)
		}
	}
	if s := series(t, reg, "lock_releases_total", "jobs", "skipped"); len(s) != 0 {
		t.Error(`lock_releases_total{outcome="skipped"} exists for an observed namespace`)
	}
}

// TestStateIsBoundedForAMillionKeys acquires a million distinct keys that are never released
// (the worst case: the process sees no release to drop them) and checks that the state never
// exceeds the cap, that every lock is still counted, and that the TTL empties the state.
func TestStateIsBoundedForAMillionKeys(t *testing.T) {
	const keys, limit = 1_000_000, 10_000
	o, reg, clock := newTestObserver(t, Options{MaxTracked: limit})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keys {
		k := "jobs:" + strconv.Itoa(i)
		do(o, clock, 0, ok, "set", k, "value-"+strconv.Itoa(i), "nx", "px", "60000")
		if i%100_000 == 0 && o.Tracked() > limit {
			t.Fatalf("after %d keys the state holds %d locks, cap %d", i, o.Tracked(), limit)
		}
	}
	if got := o.Tracked(); got != limit {
		t.Fatalf("state holds %d locks, want the cap %d", got, limit)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != keys {
		t.Fatalf("acquired observations %d, want every one of %d", n, keys)
	}
	if got := value(t, reg, "lock_observe_untracked_total", "", ""); got != keys-limit {
		t.Fatalf("lock_observe_untracked_total = %v, want %d", got, keys-limit)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	// 10,000 entries of a few hundred bytes: a few MB at most, whatever the number of keys.
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Fatalf("heap grew %d bytes for a state capped at %d locks", grown, limit)
	}
	clock.advance(61 * time.Second)
	o.tracker.sweep(clock.now(), true)
	if got := o.Tracked(); got != 0 {
		t.Fatalf("state holds %d locks after every TTL passed, want 0", got)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 0 {
		t.Fatalf("lock_held = %v after every TTL passed, want 0", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// redsync deletes its value on every pool after a try that missed the quorum, the busy ones
// included: a cleanup of a value that never held is not a release.
func TestFailedAcquireCleanupIsNotARelease(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{})
	do(o, clock, 0, ok, acquireArgs("jobs:1", "A")...)
	do(o, clock, 0, nilReply, acquireArgs("jobs:1", "B")...)
	do(o, clock, 0, zero, releaseArgs("jobs:1", "B")...)
	if got := value(t, reg, "lock_releases_total", "jobs", "not_owned"); got != 0 {
		t.Fatalf("a failed try's cleanup counted as %v not-owned releases", got)
	}
	// A stale holder's release still counts.
	clock.advance(11 * time.Second)
	do(o, clock, 0, zero, releaseArgs("jobs:1", "A")...)
	if got := value(t, reg, "lock_releases_total", "jobs", "not_owned"); got != 1 {
		t.Fatalf("stale release counted %v times, want 1", got)
	}
}
