package lease

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

	mu    sync.Mutex
	bound []*lockmetrics.Series // every namespace's series, unbound by close
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

// close stops what the metrics keep running: the OTel callback of the observable series, and
// on a Registerer the namespaces' part in lock_held_oldest_seconds, whose collector outlives
// the Client on a shared registry.
func (m *metrics) close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	for _, s := range m.bound {
		s.Unbind()
	}
	m.bound = nil
	m.mu.Unlock()
	if m.otel == nil {
		return nil
	}
	return m.otel.Close()
}

// nsMetrics are one namespace's series (bound once, in internal/lockmetrics) and the leases
// it holds, oldest first, for lock_held_oldest_seconds. A nil *nsMetrics means metrics are off.
type nsMetrics struct {
	*lockmetrics.Series
	holds heldList
}

// forNamespace binds every series of ns, so that a scrape right after the namespace is declared
// already shows all families at zero (with OTel, every counter and gauge; a histogram series
// appears with its first observation).
func (m *metrics) forNamespace(ns string) *nsMetrics {
	if m == nil {
		return nil
	}
	nm := &nsMetrics{}
	if m.otel != nil {
		nm.Series = m.otel.Bind(ns, lockmetrics.LeaseScope, nm.holds.oldest)
	} else {
		nm.Series = m.prom.Bind(ns, lockmetrics.LeaseScope, nm.holds.oldest)
	}
	m.mu.Lock()
	m.bound = append(m.bound, nm.Series)
	m.mu.Unlock()
	return nm
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
		m.WaitAcquired.Observe(wait)
	case errors.Is(err, ErrBusy):
		m.WaitBusy.Observe(wait)
	default:
		m.WaitError.Observe(wait)
	}
}

// holdStarted counts l in lock_held, adds it to the held leases and sets when its hold started
// (left zero without metrics, where nothing reads it).
func (m *nsMetrics) holdStarted(l *Lease) {
	if m == nil {
		return
	}
	m.Held.Inc()
	m.holds.push(l)
}

// holdEnded takes l out of lock_held and the held leases, and observes its hold time.
func (m *nsMetrics) holdEnded(l *Lease) {
	if m == nil {
		return
	}
	m.holds.remove(l)
	m.Held.Dec()
	m.HeldSeconds.Observe(time.Since(l.acquired).Seconds())
}

// waitStarted counts a caller whose lock was busy at its first attempt in lock_waiters, until
// waitEnded.
func (m *nsMetrics) waitStarted() {
	if m != nil {
		m.Waiters.Inc()
	}
}

func (m *nsMetrics) waitEnded() {
	if m != nil {
		m.Waiters.Dec()
	}
}

// maxHoldExceeded counts a lease ended by Policy.MaxHold.
func (m *nsMetrics) maxHoldExceeded() {
	if m != nil {
		m.MaxHoldExceeded.Inc()
	}
}

// renewDone counts a renew attempt by its outcome.
func (m *nsMetrics) renewDone(owned bool, err error) {
	if m == nil {
		return
	}
	switch {
	case err != nil:
		m.RenewFailed.Inc()
	case !owned:
		m.RenewNotOwned.Inc()
	default:
		m.RenewOK.Inc()
	}
}

// releaseDone counts a release by its outcome.
func (m *nsMetrics) releaseDone(outcome releaseOutcome) {
	if m == nil {
		return
	}
	switch outcome {
	case releaseOK:
		m.RelOK.Inc()
	case releaseNotOwned:
		m.RelNotOwned.Inc()
	case releaseError:
		m.RelError.Inc()
	case releaseSkipped:
		m.RelSkipped.Inc()
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
	m.Abandoned.Inc()
}

// fencedWrite counts a write through a fencing guard as applied or rejected.
func (m *nsMetrics) fencedWrite(applied bool) {
	switch {
	case m == nil:
	case applied:
		m.FencedApplied.Inc()
	default:
		m.FencedRejected.Inc()
	}
}
