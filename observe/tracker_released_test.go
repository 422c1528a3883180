package observe

import (
	"strconv"
	"testing"
	"time"
)

// A released Redlock leaves no entry behind: the servers it had are remembered beside the
// state (tracker.recent), so the minority's late reply is still no release of its own, for a
// second; after that it is counted, as any release of a lock not held.
func TestRedlockReleaseLeavesNoEntry(t *testing.T) {
	r, clock, check := newRedlock(t, 3)
	r.try("jobs:1", "A", ok, ok, ok) // teaches the group
	r.release("jobs:1", "A", one, one, one)
	r.try("jobs:1", "B", ok, ok, nilReply)
	r.on(1, one, releaseArgs("jobs:1", "B")...)
	r.on(2, one, releaseArgs("jobs:1", "B")...)
	if n := r.o.Tracked(); n != 0 {
		t.Fatalf("%d locks tracked after every lock was released, want 0", n)
	}
	r.on(3, zero, releaseArgs("jobs:1", "B")...) // the minority, late
	check(jobsValue{"lock_releases_total", "ok", 2}, jobsValue{"lock_releases_total", "not_owned", 0},
		jobsValue{"lock_held", "", 0})

	r.try("jobs:1", "C", ok, ok, nilReply)
	r.on(1, one, releaseArgs("jobs:1", "C")...)
	r.on(2, one, releaseArgs("jobs:1", "C")...)
	clock.advance(releaseLinger + 100*time.Millisecond)
	r.on(3, zero, releaseArgs("jobs:1", "C")...) // too late to be told apart
	check(jobsValue{"lock_releases_total", "ok", 3}, jobsValue{"lock_releases_total", "not_owned", 1})
}

// A value that takes its lock again within the second, on other servers, holds a new lock: once
// that hold has expired (a 500 ms TTL, so still within the first release's second), its late
// release on a server the first hold never had is counted (not owned), not mistaken for the
// first hold's minority.
func TestRedlockValueHeldAgainForgetsItsRelease(t *testing.T) {
	r, clock, check := newRedlock(t, 3)
	r.try("jobs:1", "A", ok, ok, ok) // teaches the group
	r.release("jobs:1", "A", one, one, one)
	r.try("jobs:1", "B", ok, ok, nilReply)
	r.release("jobs:1", "B", one, one, zero)
	short := []string{"set", "jobs:1", "B", "nx", "px", "500"}
	r.on(1, nilReply, short...)
	r.on(2, ok, short...)
	r.on(3, ok, short...) // held again, on servers 2 and 3
	check(jobsValue{"lock_held", "", 1})
	clock.advance(600 * time.Millisecond)
	// The holder, paused past its TTL, releases late; server 3 answers first.
	r.on(3, zero, releaseArgs("jobs:1", "B")...)
	check(jobsValue{"lock_held", "", 0}, jobsValue{"lock_releases_total", "ok", 2},
		jobsValue{"lock_releases_total", "not_owned", 1})
}

// The table of recent releases keeps a lock's record against the releases of other locks
// within its second: two slots per bucket, the older replaced, so a burst of releases pushes
// out few. Here 500 other locks are released between each lock's release and its minority's
// late reply (50 ms at 10,000 cycles/s): about 1% of the records are lost (2–10 in 30 runs;
// the seed is random), and a lost one counts its late reply as a release.
func TestRecentReleasesSurviveABurst(t *testing.T) {
	r, _, check := newRedlock(t, 3)
	r.try("jobs:x", "A", ok, ok, ok) // teaches the group
	r.release("jobs:x", "A", one, one, one)
	// At one instant, so that all of it is within the second.
	send := func(s int, reply Reply, args ...string) {
		c := r.o.Begin(StringArgs(args))
		c.server = uint32(s)
		c.Done(reply)
	}
	const locks = 500
	for i := range locks {
		k := "jobs:" + strconv.Itoa(i)
		send(1, ok, acquireArgs(k, "B")...)
		send(2, ok, acquireArgs(k, "B")...)
		send(3, nilReply, acquireArgs(k, "B")...)
		send(1, one, releaseArgs(k, "B")...)
		send(2, one, releaseArgs(k, "B")...)
	}
	for i := range locks {
		send(3, zero, releaseArgs("jobs:"+strconv.Itoa(i), "B")...)
	}
	counted := value(t, r.reg, "lock_releases_total", "jobs", "not_owned")
	if counted > locks*5/100 {
		t.Errorf("%v of %d late minority replies counted as releases, want at most 5%%", counted, locks)
	}
	t.Logf("%v of %d records pushed out", counted, locks)
	check(jobsValue{"lock_releases_total", "ok", locks + 1}, jobsValue{"lock_held", "", 0})
}
