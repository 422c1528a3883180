package observe

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// untrackedHelp documents lock_observe_untracked_total on both paths.
const untrackedHelp = "Locks the observe hook counted but did not track (held gauge, hold and wait times) because MaxTracked was reached."

// unclassifiedHelp documents lock_observe_unclassified_scripts_total on both paths.
const unclassifiedHelp = "EVALSHA calls on a declared namespace's key whose script the observe hook never saw and does not know: lock operations it may be missing."

// nsMetrics are one namespace's series, bound in internal/lockmetrics as lease binds its own,
// with the scope the wire can derive.
type nsMetrics = lockmetrics.Series

// metricsPath is where an Observer's metrics go: a Prometheus registry (promPath) or an OTel
// MeterProvider (otelPath). Both create the same series under the same names after
// Prometheus' OTLP translation.
type metricsPath interface {
	// namespace binds ns's series, oldest feeding lock_held_oldest_seconds. The ones the wire
	// cannot derive (lockmetrics.WireScope) are not created.
	namespace(ns string, oldest lockmetrics.OldestFunc) *nsMetrics
	// untracked is lock_observe_untracked_total.
	untracked() lockmetrics.Counter
	// unclassified is lock_observe_unclassified_scripts_total.
	unclassified() lockmetrics.Counter
	// sweepOnCollect makes every scrape or collection run sweep before a family the sweep
	// writes is read, and flush before every other family the tracker writes is read (sweep
	// applies the pending replies too: see pendingReply).
	sweepOnCollect(sweep, flush func()) error
	// close stops what the path keeps registered outside the Observer.
	close() error
}

// promPath registers the contract's families and lock_observe_untracked_total on a
// prometheus.Registerer.
type promPath struct {
	reg     prometheus.Registerer
	fams    *lockmetrics.Families
	dropped *sweptCounter
	unknown *sweptCounter

	mu sync.Mutex
	// unbind takes this Observer's namespaces and collect hooks off the shared families, which
	// would otherwise keep the closed Observer (its tracker) reachable and run it at every
	// scrape.
	unbind []func()
}

func newPromPath(reg prometheus.Registerer) (*promPath, error) {
	fams, err := lockmetrics.Register(reg)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	dropped, err := registerCounter(reg, "lock_observe_untracked_total", untrackedHelp)
	if err != nil {
		return nil, err
	}
	unknown, err := registerCounter(reg, "lock_observe_unclassified_scripts_total", unclassifiedHelp)
	if err != nil {
		return nil, err
	}
	return &promPath{reg: reg, fams: fams, dropped: dropped, unknown: unknown}, nil
}

func (p *promPath) namespace(ns string, oldest lockmetrics.OldestFunc) *nsMetrics {
	s := p.fams.Bind(ns, lockmetrics.WireScope, oldest)
	p.onClose(s.Unbind)
	return s
}

func (p *promPath) onClose(f ...func()) {
	p.mu.Lock()
	p.unbind = append(p.unbind, f...)
	p.mu.Unlock()
}

func (p *promPath) untracked() lockmetrics.Counter { return p.dropped }

func (p *promPath) unclassified() lockmetrics.Counter { return p.unknown }

// sweepOnCollect runs sweep inside the collection of every family a sweep writes — lock_held,
// lock_waiters, lock_acquire_wait_seconds (a wait given up is observed busy),
// lock_held_seconds and lock_renewals_total (a hold past its deadline ends) — before its values
// are read: a collector of its own would run beside them (a registry collects concurrently),
// and a scrape could read a family before the sweep that is due has written it, showing an
// expired lock as held or a given-up wait one scrape late. Each is swept in its own
// collection, so a scrape sweeps several times; the later ones find nothing to do. The other
// families the tracker writes apply the pending replies in theirs.
func (p *promPath) sweepOnCollect(sweep, flush func()) error {
	p.onClose(
		p.fams.Held.BeforeCollect(sweep),
		p.fams.Waiters.BeforeCollect(sweep),
		p.fams.AcquireWait.BeforeCollect(sweep),
		p.fams.HeldSeconds.BeforeCollect(sweep),
		p.fams.Renewals.BeforeCollect(sweep),
		p.fams.Releases.BeforeCollect(flush),
		p.dropped.BeforeCollect(flush),
	)
	return nil
}

// close takes the Observer off the families and leaves them registered: other producers on the
// registry may share them, and their series keep their counts.
func (p *promPath) close() error {
	p.mu.Lock()
	unbind := p.unbind
	p.unbind = nil
	p.mu.Unlock()
	for _, f := range unbind {
		f()
	}
	return nil
}

// registerCounter registers one of the families that are observe's own (locks not tracked
// because MaxTracked was reached, scripts it could not classify). Shared like the contract's
// families when several Observers share a registry.
func registerCounter(reg prometheus.Registerer, name, help string) (*sweptCounter, error) {
	c := &sweptCounter{Counter: prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*sweptCounter); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("observe: register %s: %w", name, err)
	}
	return c, nil
}

// sweptCounter is one of observe's own counters with hooks run before it is read:
// lock_observe_untracked_total is counted when the tracker applies a reply (see
// pendingReply).
type sweptCounter struct {
	prometheus.Counter
	lockmetrics.CollectHooks
}

// Collect runs the hooks, then collects the counter.
func (c *sweptCounter) Collect(ch chan<- prometheus.Metric) {
	c.Run()
	c.Counter.Collect(ch)
}
