package observe

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// untrackedHelp documents lock_observe_untracked_total on both paths.
const untrackedHelp = "Locks the observe hook counted but did not track (held gauge, hold and wait times) because MaxTracked was reached."

// nsMetrics are one namespace's series that the wire can derive, on either metrics path.
type nsMetrics struct {
	waitAcquired, waitBusy, waitError   lockmetrics.Observer
	renewOK, renewFailed, renewNotOwned lockmetrics.Counter
	relOK, relNotOwned, relError        lockmetrics.Counter
	heldSeconds                         lockmetrics.Observer
	held                                lockmetrics.Gauge
}

// metricsPath is where an Observer's metrics go: a Prometheus registry (promPath) or an OTel
// MeterProvider (otelPath). Both create the same series under the same names after
// Prometheus' OTLP translation.
type metricsPath interface {
	// namespace binds ns's series. The ones the wire cannot derive (lock_abandoned_total,
	// lock_fenced_writes_total, lock_releases_total{outcome="skipped"}) are not created.
	namespace(ns string) *nsMetrics
	// untracked is lock_observe_untracked_total.
	untracked() lockmetrics.Counter
	// sweepOnCollect makes every scrape or collection run sweep first.
	sweepOnCollect(sweep func()) error
	// close stops what the path keeps registered outside the Observer.
	close() error
}

// promPath registers the contract's families and lock_observe_untracked_total on a
// prometheus.Registerer.
type promPath struct {
	reg     prometheus.Registerer
	fams    *lockmetrics.Families
	dropped prometheus.Counter
}

func newPromPath(reg prometheus.Registerer) (*promPath, error) {
	fams, err := lockmetrics.Register(reg)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	dropped, err := registerDropped(reg)
	if err != nil {
		return nil, err
	}
	return &promPath{reg: reg, fams: fams, dropped: dropped}, nil
}

func (p *promPath) namespace(ns string) *nsMetrics {
	f := p.fams
	return &nsMetrics{
		waitAcquired:  f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeAcquired),
		waitBusy:      f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeBusy),
		waitError:     f.AcquireWait.WithLabelValues(ns, lockmetrics.OutcomeError),
		renewOK:       f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeOK),
		renewFailed:   f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeFailed),
		renewNotOwned: f.Renewals.WithLabelValues(ns, lockmetrics.OutcomeNotOwned),
		relOK:         f.Releases.WithLabelValues(ns, lockmetrics.OutcomeOK),
		relNotOwned:   f.Releases.WithLabelValues(ns, lockmetrics.OutcomeNotOwned),
		relError:      f.Releases.WithLabelValues(ns, lockmetrics.OutcomeError),
		heldSeconds:   f.HeldSeconds.WithLabelValues(ns),
		held:          f.Held.WithLabelValues(ns),
	}
}

func (p *promPath) untracked() lockmetrics.Counter { return p.dropped }

// sweepOnCollect runs sweep inside lock_held's own collection, before its values are read: a
// collector of its own would run beside lock_held's (a registry collects concurrently), and a
// scrape could read lock_held before the sweep removed the expired locks.
func (p *promPath) sweepOnCollect(sweep func()) error {
	p.fams.Held.BeforeCollect(sweep)
	return nil
}

// close leaves the families registered: other producers on the registry may share them.
func (p *promPath) close() error { return nil }

// registerDropped registers the one family that is observe's own: locks not tracked because
// MaxTracked was reached. Shared like the contract's families when several Observers share a
// registry.
func registerDropped(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lock_observe_untracked_total",
		Help: untrackedHelp,
	})
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(prometheus.Counter); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("observe: register lock_observe_untracked_total: %w", err)
	}
	return c, nil
}
