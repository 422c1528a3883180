package lockmetrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
)

// Series are one namespace's series, bound once when the namespace is declared so that no lock
// operation pays for a label lookup. lease and observe both record through it, on either path,
// so the label values and attribute sets of a namespace are written here and nowhere else.
// A series its producer cannot derive is nil (see Scope).
type Series struct {
	WaitAcquired, WaitBusy, WaitError   Observer
	RenewOK, RenewFailed, RenewNotOwned Counter
	RelOK, RelNotOwned, RelError        Counter
	RelSkipped                          Counter // lease only
	Abandoned                           Counter // lease only
	HeldSeconds                         Observer
	Held                                Gauge
	Waiters                             Gauge   // for observe, absent until first used: see Scope
	FencedApplied, FencedRejected       Counter // lease only
	MaxHoldExceeded                     Counter // lease only

	unbind func() // removes the producer's OldestFunc; nil when there is none
}

// Unbind stops lock_held_oldest_seconds asking this producer for its oldest hold: a producer
// that closes calls it, so that a registry shared by many short-lived producers (a lease Client
// made and closed per task on the default registry) neither keeps each one's state reachable
// nor asks all of them at every scrape. The series themselves stay, with their counts.
func (s *Series) Unbind() {
	if s != nil && s.unbind != nil {
		s.unbind()
		s.unbind = nil
	}
}

// Scope says which series a producer has.
type Scope uint8

const (
	// LeaseScope is every series: lease knows each event it causes.
	LeaseScope Scope = iota
	// WireScope is what observe derives from another library's commands. Abandonments, fenced
	// writes, skipped releases and MaxHold happen inside the peer library and never reach the
	// wire, so those series are left absent rather than 0. Waiters show only where a library
	// retries with the same value (rueidislock waits without retrying), so that series appears
	// with the namespace's first waiter, not at 0 before.
	WireScope
)

// Bind creates ns's series on the Prometheus families, every label combination at once, so
// that a scrape right after the namespace is bound already shows them at zero; oldest (nil for
// none) feeds lock_held_oldest_seconds.
func (f *Families) Bind(ns string, scope Scope, oldest OldestFunc) *Series {
	s := &Series{
		WaitAcquired:  f.AcquireWait.WithLabelValues(ns, OutcomeAcquired),
		WaitBusy:      f.AcquireWait.WithLabelValues(ns, OutcomeBusy),
		WaitError:     f.AcquireWait.WithLabelValues(ns, OutcomeError),
		RenewOK:       f.Renewals.WithLabelValues(ns, OutcomeOK),
		RenewFailed:   f.Renewals.WithLabelValues(ns, OutcomeFailed),
		RenewNotOwned: f.Renewals.WithLabelValues(ns, OutcomeNotOwned),
		RelOK:         f.Releases.WithLabelValues(ns, OutcomeOK),
		RelNotOwned:   f.Releases.WithLabelValues(ns, OutcomeNotOwned),
		RelError:      f.Releases.WithLabelValues(ns, OutcomeError),
		HeldSeconds:   f.HeldSeconds.WithLabelValues(ns),
		Held:          f.Held.WithLabelValues(ns),
	}
	if scope == LeaseScope {
		s.RelSkipped = f.Releases.WithLabelValues(ns, OutcomeSkipped)
		s.Abandoned = f.Abandoned.WithLabelValues(ns)
		s.Waiters = f.Waiters.WithLabelValues(ns)
		s.FencedApplied = f.FencedWrites.WithLabelValues(ns, OutcomeApplied)
		s.FencedRejected = f.FencedWrites.WithLabelValues(ns, OutcomeRejected)
		s.MaxHoldExceeded = f.MaxHoldExceeded.WithLabelValues(ns)
	} else {
		s.Waiters = &firstUseGauge{vec: f.Waiters.GaugeVec, ns: ns}
	}
	if oldest != nil {
		s.unbind = f.HeldOldest.add(ns, oldest)
	}
	return s
}

// Bind creates ns's series on the OTel instruments, with the attributes Families.Bind gives
// as labels. Every counter and gauge is reported from now on; a histogram series appears with
// its first observation.
func (i *Instruments) Bind(ns string, scope Scope, oldest OldestFunc) *Series {
	attrs := func(outcome string) attribute.Set { return Attributes(ns, outcome) }
	s := &Series{
		WaitAcquired:  HistogramSeries(i.AcquireWait, attrs(OutcomeAcquired)),
		WaitBusy:      HistogramSeries(i.AcquireWait, attrs(OutcomeBusy)),
		WaitError:     HistogramSeries(i.AcquireWait, attrs(OutcomeError)),
		RenewOK:       i.Counter(i.Renewals, attrs(OutcomeOK)),
		RenewFailed:   i.Counter(i.Renewals, attrs(OutcomeFailed)),
		RenewNotOwned: i.Counter(i.Renewals, attrs(OutcomeNotOwned)),
		RelOK:         i.Counter(i.Releases, attrs(OutcomeOK)),
		RelNotOwned:   i.Counter(i.Releases, attrs(OutcomeNotOwned)),
		RelError:      i.Counter(i.Releases, attrs(OutcomeError)),
		HeldSeconds:   HistogramSeries(i.HeldSeconds, attrs("")),
		Held:          i.UpDown(i.Held, attrs("")),
	}
	if scope == LeaseScope {
		s.RelSkipped = i.Counter(i.Releases, attrs(OutcomeSkipped))
		s.Abandoned = i.Counter(i.Abandoned, attrs(""))
		s.Waiters = i.UpDown(i.Waiters, attrs(""))
		s.FencedApplied = i.Counter(i.FencedWrites, attrs(OutcomeApplied))
		s.FencedRejected = i.Counter(i.FencedWrites, attrs(OutcomeRejected))
		s.MaxHoldExceeded = i.Counter(i.MaxHoldExceeded, attrs(""))
	} else {
		s.Waiters = i.UpDownFromFirstUse(i.Waiters, attrs(""))
	}
	if oldest != nil {
		i.age(attrs(""), oldest)
	}
	return s
}

// firstUseGauge is a namespace's child of a GaugeVec created at its first use, so that the
// series is absent until then (see WireScope).
type firstUseGauge struct {
	vec   *prometheus.GaugeVec
	ns    string
	once  sync.Once
	gauge prometheus.Gauge
}

func (g *firstUseGauge) child() prometheus.Gauge {
	g.once.Do(func() { g.gauge = g.vec.WithLabelValues(g.ns) })
	return g.gauge
}

func (g *firstUseGauge) Inc() { g.child().Inc() }
func (g *firstUseGauge) Dec() { g.child().Dec() }
