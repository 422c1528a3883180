package lease

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Label values of the outcome label. They are part of the metric contract.
const (
	outcomeAcquired = "acquired"
	outcomeBusy     = "busy"
	outcomeError    = "error"
	outcomeOK       = "ok"
	outcomeFailed   = "failed"
	outcomeNotOwned = "not_owned"
	outcomeSkipped  = "skipped"
	outcomeApplied  = "applied"
	outcomeRejected = "rejected"
)

const namespaceLabel = "lock_namespace"

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

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		acquireWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lock_acquire_wait_seconds",
			Help: "Time from an acquire call to its outcome (acquired, busy or error).",
			// From an uncontended round trip (sub-millisecond) up to AcquireTimeout (seconds).
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{namespaceLabel, "outcome"}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_renewals_total",
			Help: "Lease renew attempts by outcome (ok, failed, not_owned).",
		}, []string{namespaceLabel, "outcome"}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_releases_total",
			Help: "Lease releases by outcome (ok, not_owned, error, skipped); skipped means abandoned or held until expiry.",
		}, []string{namespaceLabel, "outcome"}),
		abandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_abandoned_total",
			Help: "Leases given up (fenced) after the renew-failure bound or a not-owned renew.",
		}, []string{namespaceLabel}),
		heldSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lock_held_seconds",
			Help: "Hold time of a lease, from acquire to release or abandonment.",
			// From a short approval (milliseconds) up to a long scheduler job (an hour).
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{namespaceLabel}),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lock_held",
			Help: "Leases this process holds now.",
		}, []string{namespaceLabel}),
		fencedWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_fenced_writes_total",
			Help: "Writes through the fencing guard by outcome (applied, rejected).",
		}, []string{namespaceLabel, "outcome"}),
	}
	// Several Clients may share one registry (one per Redis deployment, say); they then share
	// the families too, instead of failing on the second registration.
	var err error
	m.acquireWait, err = register(reg, m.acquireWait)
	if err == nil {
		m.renewals, err = register(reg, m.renewals)
	}
	if err == nil {
		m.releases, err = register(reg, m.releases)
	}
	if err == nil {
		m.abandoned, err = register(reg, m.abandoned)
	}
	if err == nil {
		m.heldSeconds, err = register(reg, m.heldSeconds)
	}
	if err == nil {
		m.held, err = register(reg, m.held)
	}
	if err == nil {
		m.fencedWrites, err = register(reg, m.fencedWrites)
	}
	if err != nil {
		return nil, fmt.Errorf("lease: register metrics: %w", err)
	}
	return m, nil
}

// register registers c, or returns the identical collector registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
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
