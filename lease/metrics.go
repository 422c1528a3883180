package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// Label values of the outcome label, from the one contract definition.
const (
	outcomeAcquired = lockmetrics.OutcomeAcquired
	outcomeBusy     = lockmetrics.OutcomeBusy
	outcomeError    = lockmetrics.OutcomeError
	outcomeOK       = lockmetrics.OutcomeOK
	outcomeFailed   = lockmetrics.OutcomeFailed
	outcomeNotOwned = lockmetrics.OutcomeNotOwned
	outcomeSkipped  = lockmetrics.OutcomeSkipped
	outcomeApplied  = lockmetrics.OutcomeApplied
	outcomeRejected = lockmetrics.OutcomeRejected
)

const namespaceLabel = lockmetrics.NamespaceLabel

// metrics holds the library's metric families, shared by every namespace of a Client: either
// client_golang families on a Registerer or OTel instruments on a MeterProvider.
type metrics struct {
	prom *lockmetrics.Families
	otel *lockmetrics.Instruments
}

// newMetrics registers the contract's families (see internal/lockmetrics) on reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	f, err := lockmetrics.Register(reg)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	return &metrics{prom: f}, nil
}

// newOTelMetrics creates the contract's instruments on mp's meter.
func newOTelMetrics(mp metric.MeterProvider) (*metrics, error) {
	i, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	return &metrics{otel: i}, nil
}

// close stops what the metrics keep running: the OTel callback of the observable series.
func (m *metrics) close() error {
	if m == nil || m.otel == nil {
		return nil
	}
	return m.otel.Close()
}

// nsMetrics are one namespace's series, bound once when the namespace is declared so that no
// operation pays for a label lookup. A nil *nsMetrics means metrics are off.
type nsMetrics struct {
	waitAcquired, waitBusy, waitError     lockmetrics.Observer
	renewOK, renewFailed, renewNotOwned   lockmetrics.Counter
	relOK, relNotOwned, relError, relSkip lockmetrics.Counter
	abandoned                             lockmetrics.Counter
	heldSeconds                           lockmetrics.Observer
	held                                  lockmetrics.Gauge
	fencedApplied, fencedRejected         lockmetrics.Counter
}

// forNamespace creates every label combination of ns, so that a scrape right after the
// namespace is declared already shows all families at zero (with OTel, every counter and the
// gauge; a histogram series appears with its first observation).
func (m *metrics) forNamespace(ns string) *nsMetrics {
	switch {
	case m == nil:
		return nil
	case m.otel != nil:
		return otelNamespace(m.otel, ns)
	default:
		return promNamespace(m.prom, ns)
	}
}

// The methods below record one event each. They do nothing on a nil *nsMetrics (a Client
// without metrics), so that call sites need no check and a Client without metrics pays for
// nothing but the call.

// acquireDone observes the wait of an acquire that started at start and ended with err.
func (m *nsMetrics) acquireDone(start time.Time, err error) {
	if m == nil {
		return
	}
	wait := time.Since(start).Seconds()
	switch {
	case err == nil:
		m.waitAcquired.Observe(wait)
	case errors.Is(err, ErrBusy):
		m.waitBusy.Observe(wait)
	default:
		m.waitError.Observe(wait)
	}
}

// holdStarted counts a new lease in lock_held and returns when its hold started (the zero time
// without metrics, where nothing reads it).
func (m *nsMetrics) holdStarted() time.Time {
	if m == nil {
		return time.Time{}
	}
	m.held.Inc()
	return time.Now()
}

// holdEnded takes a lease out of lock_held and observes its hold time since acquired.
func (m *nsMetrics) holdEnded(acquired time.Time) {
	if m == nil {
		return
	}
	m.held.Dec()
	m.heldSeconds.Observe(time.Since(acquired).Seconds())
}

// renewDone counts a renew attempt by its outcome.
func (m *nsMetrics) renewDone(owned bool, err error) {
	if m == nil {
		return
	}
	switch {
	case err != nil:
		m.renewFailed.Inc()
	case !owned:
		m.renewNotOwned.Inc()
	default:
		m.renewOK.Inc()
	}
}

// releaseDone counts a release by its outcome.
func (m *nsMetrics) releaseDone(outcome releaseOutcome) {
	if m == nil {
		return
	}
	switch outcome {
	case releaseOK:
		m.relOK.Inc()
	case releaseNotOwned:
		m.relNotOwned.Inc()
	case releaseError:
		m.relError.Inc()
	case releaseSkipped:
		m.relSkip.Inc()
	}
}

// releaseOutcome is the outcome label of lock_releases_total.
type releaseOutcome uint8

const (
	releaseOK releaseOutcome = iota
	releaseNotOwned
	releaseError
	releaseSkipped // abandoned, or HoldUntilExpiry
)

// leaseAbandoned counts an abandonment.
func (m *nsMetrics) leaseAbandoned() {
	if m == nil {
		return
	}
	m.abandoned.Inc()
}

// fencedWrite counts a write through a fencing guard as applied or rejected.
func (m *nsMetrics) fencedWrite(applied bool) {
	switch {
	case m == nil:
	case applied:
		m.fencedApplied.Inc()
	default:
		m.fencedRejected.Inc()
	}
}

// promNamespace binds ns's client_golang children.
func promNamespace(f *lockmetrics.Families, ns string) *nsMetrics {
	return &nsMetrics{
		waitAcquired:   f.AcquireWait.WithLabelValues(ns, outcomeAcquired),
		waitBusy:       f.AcquireWait.WithLabelValues(ns, outcomeBusy),
		waitError:      f.AcquireWait.WithLabelValues(ns, outcomeError),
		renewOK:        f.Renewals.WithLabelValues(ns, outcomeOK),
		renewFailed:    f.Renewals.WithLabelValues(ns, outcomeFailed),
		renewNotOwned:  f.Renewals.WithLabelValues(ns, outcomeNotOwned),
		relOK:          f.Releases.WithLabelValues(ns, outcomeOK),
		relNotOwned:    f.Releases.WithLabelValues(ns, outcomeNotOwned),
		relError:       f.Releases.WithLabelValues(ns, outcomeError),
		relSkip:        f.Releases.WithLabelValues(ns, outcomeSkipped),
		abandoned:      f.Abandoned.WithLabelValues(ns),
		heldSeconds:    f.HeldSeconds.WithLabelValues(ns),
		held:           f.Held.WithLabelValues(ns),
		fencedApplied:  f.FencedWrites.WithLabelValues(ns, outcomeApplied),
		fencedRejected: f.FencedWrites.WithLabelValues(ns, outcomeRejected),
	}
}

// otelNamespace binds ns's OTel series, with the same attributes as promNamespace's labels.
func otelNamespace(i *lockmetrics.Instruments, ns string) *nsMetrics {
	attrs := func(outcome string) attribute.Set { return lockmetrics.Attributes(ns, outcome) }
	return &nsMetrics{
		waitAcquired:   lockmetrics.HistogramSeries(i.AcquireWait, attrs(outcomeAcquired)),
		waitBusy:       lockmetrics.HistogramSeries(i.AcquireWait, attrs(outcomeBusy)),
		waitError:      lockmetrics.HistogramSeries(i.AcquireWait, attrs(outcomeError)),
		renewOK:        i.Counter(i.Renewals, attrs(outcomeOK)),
		renewFailed:    i.Counter(i.Renewals, attrs(outcomeFailed)),
		renewNotOwned:  i.Counter(i.Renewals, attrs(outcomeNotOwned)),
		relOK:          i.Counter(i.Releases, attrs(outcomeOK)),
		relNotOwned:    i.Counter(i.Releases, attrs(outcomeNotOwned)),
		relError:       i.Counter(i.Releases, attrs(outcomeError)),
		relSkip:        i.Counter(i.Releases, attrs(outcomeSkipped)),
		abandoned:      i.Counter(i.Abandoned, attrs("")),
		heldSeconds:    lockmetrics.HistogramSeries(i.HeldSeconds, attrs("")),
		held:           i.UpDown(i.Held, attrs("")),
		fencedApplied:  i.Counter(i.FencedWrites, attrs(outcomeApplied)),
		fencedRejected: i.Counter(i.FencedWrites, attrs(outcomeRejected)),
	}
}
