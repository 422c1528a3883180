package observe

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// redlock is a fake Redlock of n servers on one Observer: each server is a hook, and a try
// sends the same command with one value to every server, as redsync does.
type redlock struct {
	o     *Observer
	reg   *prometheus.Registry
	clock *fakeClock
}

func newRedlock(t *testing.T, n int) (*redlock, *fakeClock, func(...jobsValue)) {
	o, reg, clock := newTestObserver(t, Options{GiveUpAfter: time.Second})
	for range n {
		o.Hook()
	}
	return &redlock{o, reg, clock}, clock, func(w ...jobsValue) { t.Helper(); checkJobs(t, reg, w...) }
}

// on sends args to server s (1-based, as hooks are numbered) with reply r, 1ms round trip.
func (r *redlock) on(s int, reply Reply, args ...string) {
	c := r.o.Begin(StringArgs(args))
	c.server = uint32(s)
	r.clock.advance(time.Millisecond)
	c.Done(reply)
}

// try sends SET NX with value v to every server, each answering its reply in turn.
func (r *redlock) try(key, v string, replies ...Reply) {
	for s, reply := range replies {
		r.on(s+1, reply, acquireArgs(key, v)...)
	}
}

// release sends the compare-and-delete to every server, answering 1 where held.
func (r *redlock) release(key, v string, replies ...Reply) {
	for s, reply := range replies {
		r.on(s+1, reply, releaseArgs(key, v)...)
	}
}

// A try that takes a minority of the servers is a failed (busy) try: no acquisition, no hold,
// and its clean-up release on every server is no release. Only the quorum's try is counted.
func TestRedlockMinorityWinIsABusyTry(t *testing.T) {
	r, _, check := newRedlock(t, 3)
	// A first lock teaches the group: complete at its release.
	r.try("jobs:1", "A", ok, ok, ok)
	r.release("jobs:1", "A", one, one, one)
	check(jobsValue{"lock_releases_total", "ok", 1}, jobsValue{"lock_held", "", 0})

	// B holds jobs:2 on servers 1 and 2; C takes only server 3 (a minority), then cleans up.
	r.try("jobs:2", "B", ok, ok, nilReply)
	r.try("jobs:2", "C", nilReply, nilReply, ok)
	check(jobsValue{"lock_held", "", 1})
	r.release("jobs:2", "C", zero, zero, one)
	check(jobsValue{"lock_held", "", 1}, jobsValue{"lock_releases_total", "ok", 1},
		jobsValue{"lock_releases_total", "not_owned", 0})
	// Same again with the minority's ok first: it is not a hold while the try is open.
	r.try("jobs:2", "C", ok, nilReply, nilReply)
	check(jobsValue{"lock_held", "", 1})
	r.release("jobs:2", "C", one, zero, zero)
	r.release("jobs:2", "B", one, one, zero)
	r.try("jobs:2", "C", ok, ok, ok)
	r.release("jobs:2", "C", one, one, one)
	if n, _ := histogram(t, r.reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 3 {
		t.Errorf("acquired = %d for three locks taken by quorum (A, B, C), want 3", n)
	}
	check(jobsValue{"lock_held", "", 0}, jobsValue{"lock_releases_total", "ok", 3},
		jobsValue{"lock_releases_total", "not_owned", 0})
}

// With an even number of servers the quorum is more than half: 2 of 4 is a lost try.
func TestRedlockEvenGroupNeedsMoreThanHalf(t *testing.T) {
	r, _, check := newRedlock(t, 4)
	r.try("jobs:1", "A", ok, ok, ok, ok)
	r.release("jobs:1", "A", one, one, one, one)
	r.try("jobs:1", "B", ok, ok, nilReply, nilReply)
	check(jobsValue{"lock_held", "", 0})
	r.release("jobs:1", "B", one, one, zero, zero)
	r.try("jobs:1", "B", ok, ok, ok, nilReply)
	check(jobsValue{"lock_held", "", 1})
	if n, _ := histogram(t, r.reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired = %d, want 2 (A, and B's second try)", n)
	}
}

// The first try through an Observer's servers is decided when it is complete (at the value's
// next command), as the group is not known before: a minority's ok is not counted even then.
func TestRedlockFirstTryDecidedWhenComplete(t *testing.T) {
	r, clock, check := newRedlock(t, 3)
	r.try("jobs:1", "B", ok, nilReply, nilReply)
	check(jobsValue{"lock_held", "", 0})
	r.release("jobs:1", "B", one, zero, zero) // the clean-up completes the try: lost
	clock.advance(10 * time.Millisecond)
	r.try("jobs:1", "B", ok, ok, nilReply) // the group is known now: won at the second ok
	check(jobsValue{"lock_held", "", 1}, jobsValue{"lock_releases_total", "ok", 0},
		jobsValue{"lock_releases_total", "not_owned", 0})
	reg := r.reg
	if n, sum := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 1 || !near(sum, 0.018) {
		// From the first try's first call (t=0) to the second ok of the second try: 3 + 3
		// + 10 + 2 ms.
		t.Errorf("acquired: count %d sum %v, want 1 and 0.018", n, sum)
	}
	// A first lock held with no command after its try is decided GiveUpAfter after it.
	r2, clock2, check2 := newRedlock(t, 3)
	r2.try("jobs:9", "D", ok, ok, nilReply)
	check2(jobsValue{"lock_held", "", 0})
	clock2.advance(1100 * time.Millisecond)
	r2.o.tracker.sweep(clock2.now(), true)
	check2(jobsValue{"lock_held", "", 1})
}

// A server down answers every try with an error; the others' quorum decides the try.
func TestRedlockServerDownIsNoFailedTry(t *testing.T) {
	r, _, check := newRedlock(t, 3)
	down := Reply{Err: errTimeout}
	r.try("jobs:1", "A", ok, ok, down)
	r.release("jobs:1", "A", one, one, down)
	r.try("jobs:1", "B", ok, down, ok)
	check(jobsValue{"lock_held", "", 1})
	r.try("jobs:1", "C", nilReply, down, nilReply) // busy: the try failed by a refusal
	r.release("jobs:1", "C", zero, down, zero)
	reg := r.reg
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "error"); n != 0 {
		t.Errorf("error waits = %d, want 0", n)
	}
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired = %d, want 2", n)
	}
	check(jobsValue{"lock_releases_total", "ok", 1}, jobsValue{"lock_releases_total", "error", 0})
	// Two servers down: errors alone make the quorum unreachable, and the wait ends as an
	// error, as a single server's failed attempt does.
	r.try("jobs:2", "E", ok, down, down)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "error"); n != 1 {
		t.Errorf("error waits = %d after a try two servers failed, want 1", n)
	}
	r.release("jobs:2", "E", one, down, down)
	check(jobsValue{"lock_releases_total", "ok", 1}, jobsValue{"lock_releases_total", "error", 0},
		jobsValue{"lock_held", "", 1})
}

// On an Observer with several hooks, a single-server lock's first try waits for its next
// command to learn that its server is alone; from then on each try is decided at its reply.
func TestSingleServerOnSeveralHooksLearnsItsGroup(t *testing.T) {
	r, _, check := newRedlock(t, 2)
	r.on(1, ok, acquireArgs("jobs:1", "A")...)
	check(jobsValue{"lock_held", "", 0})
	r.on(1, one, refreshArgs("jobs:1", "A")...) // A's next command: the try was all of it
	check(jobsValue{"lock_held", "", 1}, jobsValue{"lock_renewals_total", "ok", 1})
	r.on(2, nilReply, acquireArgs("jobs:2", "B")...)
	r.on(2, nilReply, acquireArgs("jobs:2", "B")...) // B's second try: the first was all of it
	wantWaiters(t, r.reg, 1)
	r.on(2, ok, acquireArgs("jobs:2", "B")...)
	check(jobsValue{"lock_held", "", 2})
	wantWaiters(t, r.reg, 0)
	if n, _ := histogram(t, r.reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired = %d, want 2", n)
	}
}
