package lease

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

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

// metrics holds the library's metric families, shared by every namespace of a Client.
type metrics struct {
	acquireWait  *prometheus.HistogramVec
	renewals     *prometheus.CounterVec
	releases     *prometheus.CounterVec
	abandoned    *prometheus.CounterVec
	heldSeconds  *prometheus.HistogramVec
	held         *prometheus.GaugeVec
	fencedWrites *prometheus.CounterVec
}

// newMetrics registers the contract's families (see internal/lockmetrics) on reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	f, err := lockmetrics.Register(reg)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	return &metrics{
		acquireWait:  f.AcquireWait,
		renewals:     f.Renewals,
		releases:     f.Releases,
		abandoned:    f.Abandoned,
		heldSeconds:  f.HeldSeconds,
		held:         f.Held,
		fencedWrites: f.FencedWrites,
	}, nil
}

// nsMetrics are one namespace's children, curried once when the namespace is declared so that
// no operation pays for a label lookup. A nil *nsMetrics means metrics are off.
type nsMetrics struct {
	waitAcquired, waitBusy, waitError     prometheus.Observer
	renewOK, renewFailed, renewNotOwned   prometheus.Counter
	relOK, relNotOwned, relError, relSkip prometheus.Counter
	abandoned                             prometheus.Counter
	heldSeconds                           prometheus.Observer
	held                                  prometheus.Gauge
	fencedApplied, fencedRejected         prometheus.Counter
}

// forNamespace creates every label combination of ns, so that a scrape right after the
// namespace is declared already shows all families at zero.
func (m *metrics) forNamespace(ns string) *nsMetrics {
	if m == nil {
		return nil
	}
	return &nsMetrics{
		waitAcquired:   m.acquireWait.WithLabelValues(ns, outcomeAcquired),
		waitBusy:       m.acquireWait.WithLabelValues(ns, outcomeBusy),
		waitError:      m.acquireWait.WithLabelValues(ns, outcomeError),
		renewOK:        m.renewals.WithLabelValues(ns, outcomeOK),
		renewFailed:    m.renewals.WithLabelValues(ns, outcomeFailed),
		renewNotOwned:  m.renewals.WithLabelValues(ns, outcomeNotOwned),
		relOK:          m.releases.WithLabelValues(ns, outcomeOK),
		relNotOwned:    m.releases.WithLabelValues(ns, outcomeNotOwned),
		relError:       m.releases.WithLabelValues(ns, outcomeError),
		relSkip:        m.releases.WithLabelValues(ns, outcomeSkipped),
		abandoned:      m.abandoned.WithLabelValues(ns),
		heldSeconds:    m.heldSeconds.WithLabelValues(ns),
		held:           m.held.WithLabelValues(ns),
		fencedApplied:  m.fencedWrites.WithLabelValues(ns, outcomeApplied),
		fencedRejected: m.fencedWrites.WithLabelValues(ns, outcomeRejected),
	}
}
