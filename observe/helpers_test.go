package observe

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// fakeClock is a manual clock for the state machine's time-based rules.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newTestObserver builds an Observer on a fresh registry with the namespaces "jobs" (jobs:*)
// and "approvals" (approval:*) and a manual clock.
func newTestObserver(t testing.TB, opts Options) (*Observer, *prometheus.Registry, *fakeClock) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	if opts.Namespaces == nil {
		opts.Namespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*"}, {Name: "approvals", Pattern: "approval:*"}}
	}
	o, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	o.testNow = clock.now
	return o, reg, clock
}

// histogram returns the sample count and sum of name{lock_namespace=ns[,outcome]}.
func histogram(t *testing.T, g prometheus.Gatherer, name, ns, outcome string) (uint64, float64) {
	t.Helper()
	for _, m := range series(t, g, name, ns, outcome) {
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	t.Fatalf("no series %s{%s,%s}", name, ns, outcome)
	return 0, 0
}

// value returns a counter's or gauge's value of name{lock_namespace=ns[,outcome]}.
func value(t *testing.T, g prometheus.Gatherer, name, ns, outcome string) float64 {
	t.Helper()
	for _, m := range series(t, g, name, ns, outcome) {
		if m.Counter != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no series %s{%s,%s}", name, ns, outcome)
	return 0
}

// jobsValue is the expected value of a counter or gauge name{lock_namespace="jobs",outcome}.
type jobsValue struct {
	name, outcome string
	want          float64
}

// checkJobs fails t for every series of the namespace jobs whose value is not the one wanted.
func checkJobs(t *testing.T, g prometheus.Gatherer, wants ...jobsValue) {
	t.Helper()
	for _, w := range wants {
		if got := value(t, g, w.name, "jobs", w.outcome); got != w.want {
			t.Errorf("%s{%s} = %v, want %v", w.name, w.outcome, got, w.want)
		}
	}
}

// series returns the series name{lock_namespace=ns[,outcome]} gathered from g.
func series(t *testing.T, g prometheus.Gatherer, name, ns, outcome string) []*dto.Metric {
	t.Helper()
	return testkit.Gathered(t, g, name, lockmetrics.NamespaceLabel, ns, "outcome", outcome)
}

// do runs one command through Begin/Done with the given reply and returns whether it was
// recognised; the clock advances by rtt between the two, as a round trip would.
func do(o *Observer, clock *fakeClock, rtt time.Duration, r Reply, args ...string) bool {
	c := o.Begin(StringArgs(args))
	clock.advance(rtt)
	c.Done(r)
	return c != nil
}

var (
	ok       = Reply{}
	nilReply = Reply{Nil: true}
	one      = Reply{Int: 1, IsInt: true}
	zero     = Reply{Int: 0, IsInt: true}
)

// wantHoldsEndedWithoutRelease checks that the holds of each namespace in holds ended (lock_held
// 0) and were timed (lock_held_seconds counts holds[ns]) without counting a release of any
// outcome: what a DEL or a flush of held keys must leave. after names the command in messages.
func wantHoldsEndedWithoutRelease(t *testing.T, g prometheus.Gatherer, after string, holds map[string]uint64) {
	t.Helper()
	for ns, want := range holds {
		if got := value(t, g, "lock_held", ns, ""); got != 0 {
			t.Errorf("lock_held{%s} = %v after the %s, want 0", ns, got, after)
		}
		if n, _ := histogram(t, g, "lock_held_seconds", ns, ""); n != want {
			t.Errorf("lock_held_seconds{%s} count = %d, want %d", ns, n, want)
		}
		for _, out := range []string{"ok", "not_owned", "error"} {
			if got := value(t, g, "lock_releases_total", ns, out); got != 0 {
				t.Errorf("lock_releases_total{%s,%s} = %v, want 0: a %s is not a release", ns, out, got, after)
			}
		}
	}
}
