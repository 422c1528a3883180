package observe

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// untrackedInstrument is the OTel name of lock_observe_untracked_total: a monotonic counter
// whose Prometheus translation adds _total, and whose unit in braces adds nothing.
const untrackedInstrument = "lock_observe_untracked"

// unclassifiedInstrument is the OTel name of lock_observe_unclassified_scripts_total.
const unclassifiedInstrument = "lock_observe_unclassified_scripts"

// otelPath records the contract's series as lockmetrics' OTel instruments (the ones lease uses,
// so names, units, attributes and buckets are the same) and lock_observe_untracked_total as an
// observable counter of observe's own, all on the meter lockmetrics.ScopeName.
type otelPath struct {
	inst         *lockmetrics.Instruments
	dropped      untrackedCount
	unknown      untrackedCount
	registration metric.Registration // the callback reporting dropped and unknown
	// flush applies the tracker's pending replies before dropped is read (see pendingReply);
	// nil until sweepOnCollect.
	flush atomic.Pointer[func()]
}

func newOTelPath(mp metric.MeterProvider) (*otelPath, error) {
	inst, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	p := &otelPath{inst: inst}
	m := mp.Meter(lockmetrics.ScopeName)
	untracked, err := m.Int64ObservableCounter(untrackedInstrument, metric.WithUnit("{lock}"), metric.WithDescription(untrackedHelp))
	var unclassified metric.Int64ObservableCounter
	if err == nil {
		unclassified, err = m.Int64ObservableCounter(unclassifiedInstrument, metric.WithUnit("{call}"), metric.WithDescription(unclassifiedHelp))
	}
	if err == nil {
		p.registration, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			if flush := p.flush.Load(); flush != nil {
				(*flush)()
			}
			o.ObserveInt64(untracked, p.dropped.n.Load())
			o.ObserveInt64(unclassified, p.unknown.n.Load())
			return nil
		}, untracked, unclassified)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("observe: OTel instruments %s, %s: %w", untrackedInstrument, unclassifiedInstrument, err), inst.Close())
	}
	return p, nil
}

func (p *otelPath) namespace(ns string, oldest lockmetrics.OldestFunc) *nsMetrics {
	return p.inst.Bind(ns, lockmetrics.WireScope, oldest)
}

func (p *otelPath) untracked() lockmetrics.Counter { return &p.dropped }

func (p *otelPath) unclassified() lockmetrics.Counter { return &p.unknown }

// sweepOnCollect runs sweep inside the instruments' callback, before lock_held is read, so a
// collection after an expiry already shows lock_held fallen back and the hold observed. The
// sweep applies the pending replies first, and the SDK runs every callback before it reads
// the histograms, so they see them too; lock_observe_untracked's own callback flushes, as the
// two callbacks run in no set order.
func (p *otelPath) sweepOnCollect(sweep, flush func()) error {
	p.inst.OnCollect(sweep)
	p.flush.Store(&flush)
	return nil
}

// close unregisters both callbacks: the Observer's counters, lock_held and
// lock_observe_untracked_total are no longer reported.
func (p *otelPath) close() error {
	return errors.Join(p.registration.Unregister(), p.inst.Close())
}

// untrackedCount is what the callback reports as lock_observe_untracked: the tracker
// increments it on the cold path where the cap is reached.
type untrackedCount struct{ n atomic.Int64 }

func (c *untrackedCount) Inc() { c.n.Add(1) }
