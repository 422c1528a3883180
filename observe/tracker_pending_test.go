package observe

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The replies the hook records are applied before any family the tracker writes is read, by
// that family's own collection: each family is gathered here alone, through a registry of its
// own, right after a few commands (far fewer than a batch), and shows them. Tracked shows them
// too. Fails if a family is read without the pending replies applied first.
func TestPendingRepliesAppliedBeforeEachFamilyIsRead(t *testing.T) {
	o, _, clock := newTestObserver(t, Options{MaxTracked: 2})
	fams := o.metrics.(*promPath)
	// jobs:1 held and renewed; jobs:2 acquired and released; jobs:3 busy twice (a waiter);
	// jobs:4 acquired, but refused room (MaxTracked 2: jobs:1 and jobs:3 are tracked).
	do(o, clock, time.Millisecond, ok, "set", "jobs:1", "a", "nx", "px", "10000")
	do(o, clock, time.Millisecond, one, "eval", testRefresh, "1", "jobs:1", "a", "10000")
	do(o, clock, time.Millisecond, ok, "set", "jobs:2", "b", "nx", "px", "10000")
	do(o, clock, time.Millisecond, one, "eval", testRelease, "1", "jobs:2", "b")
	do(o, clock, time.Millisecond, nilReply, "set", "jobs:3", "c", "nx", "px", "10000")
	do(o, clock, time.Millisecond, nilReply, "set", "jobs:3", "c", "nx", "px", "10000")
	do(o, clock, time.Millisecond, ok, "set", "jobs:4", "d", "nx", "px", "10000")
	if n := len(o.tracker.pending); n == 0 || n >= maxPending {
		t.Fatalf("%d replies pending: the test needs some, fewer than a batch", n)
	}
	alone := func(c prometheus.Collector) prometheus.Gatherer {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		return reg
	}
	if count, _ := histogram(t, alone(fams.fams.AcquireWait), "lock_acquire_wait_seconds", "jobs", "acquired"); count != 3 {
		t.Errorf("lock_acquire_wait_seconds{acquired} count = %d, want 3", count)
	}
	if count, _ := histogram(t, alone(fams.fams.HeldSeconds), "lock_held_seconds", "jobs", ""); count != 1 {
		t.Errorf("lock_held_seconds count = %d, want 1", count)
	}
	checkJobs(t, alone(fams.fams.Renewals), jobsValue{"lock_renewals_total", "ok", 1})
	checkJobs(t, alone(fams.fams.Releases), jobsValue{"lock_releases_total", "ok", 1})
	checkJobs(t, alone(fams.fams.Held), jobsValue{"lock_held", "", 1})
	checkJobs(t, alone(fams.fams.Waiters), jobsValue{"lock_waiters", "", 1})
	if got := testkit.MetricValue(t, alone(fams.dropped), "lock_observe_untracked_total"); got != 1 {
		t.Errorf("lock_observe_untracked_total = %v, want 1", got)
	}
	if n := o.Tracked(); n != 2 {
		t.Errorf("Tracked() = %d, want 2", n)
	}
}
