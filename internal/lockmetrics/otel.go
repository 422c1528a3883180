package lockmetrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the OTel instruments: the module path, as OTel
// asks of a library.
const ScopeName = "github.com/lockwatch/lockwatch"

// OTel instrument names and units. Prometheus' OTLP translation (otlptranslator with type and
// unit suffixes, the default since Prometheus 3) appends the unit ("s" → _seconds) and, for
// monotonic counters, _total; annotations in braces ("{renewal}") add nothing. The names
// therefore carry no _total, and the two histograms keep _seconds in the name because
// "lock_held" is also the gauge's name: a translator that finds the unit's word already among
// the name's tokens does not add it again. integration/otel's tests pin the result with the
// real translator.
const (
	AcquireWaitInstrument  = "lock_acquire_wait_seconds"
	RenewalsInstrument     = "lock_renewals"
	ReleasesInstrument     = "lock_releases"
	AbandonedInstrument    = "lock_abandoned"
	HeldSecondsInstrument  = "lock_held_seconds"
	HeldInstrument         = "lock_held"
	FencedWritesInstrument = "lock_fenced_writes"
	WaitersInstrument      = "lock_waiters"
	// The gauge keeps _seconds in its name for the reason the histograms do; a gauge gets no
	// _total.
	HeldOldestInstrument      = "lock_held_oldest_seconds"
	MaxHoldExceededInstrument = "lock_max_hold_exceeded"

	unitSeconds = "s"
)

// Instruments are the contract's families as OTel instruments, for an application that
// exports through an OTel MeterProvider instead of a Prometheus registry.
//
// The two histograms are synchronous. The counters and the lease gauge are observable: each
// series is an atomic integer that the hot path increments, and one callback reports them all
// when the provider's reader collects. A lock cycle then makes two SDK calls instead of five,
// which keeps the OTel path within the contract's overhead budget (docs/performance.md); the
// values are the same, since cumulative sums are what Prometheus stores anyway.
type Instruments struct {
	AcquireWait  metric.Float64Histogram
	Renewals     metric.Int64ObservableCounter
	Releases     metric.Int64ObservableCounter
	Abandoned    metric.Int64ObservableCounter
	HeldSeconds  metric.Float64Histogram
	Held         metric.Int64ObservableUpDownCounter
	FencedWrites metric.Int64ObservableCounter
	// Waiters is an up-down counter like Held: summed over Clients it is still the number of
	// callers waiting.
	Waiters         metric.Int64ObservableUpDownCounter
	MaxHoldExceeded metric.Int64ObservableCounter
	// HeldOldest is computed in the callback from each bound namespace's OldestFunc. Two
	// producers on one provider that bind the same namespace each report it, and the SDK keeps
	// one of the two values (a gauge is not summed); give them separate namespaces, or share a
	// Prometheus registry, where the oldest of both is reported.
	HeldOldest metric.Float64ObservableGauge

	registration metric.Registration

	mu        sync.Mutex
	counts    []*observedCount // every series of the observable instruments, reported by observe
	ages      []observedAge    // lock_held_oldest_seconds' sources
	onCollect func()           // run before the series are read; see OnCollect
}

// observedAge is one namespace's lock_held_oldest_seconds series.
type observedAge struct {
	opts   []metric.ObserveOption
	oldest OldestFunc
}

// NewInstruments creates the instruments on mp's meter for ScopeName and registers the callback
// of the observable ones. It starts nothing: the application's MeterProvider decides where and
// how often the measurements go. Close unregisters the callback.
func NewInstruments(mp metric.MeterProvider) (*Instruments, error) {
	if mp == nil {
		return nil, errors.New("lock metrics: nil MeterProvider")
	}
	m := mp.Meter(ScopeName)
	i := &Instruments{}
	var errs [10]error
	i.AcquireWait, errs[0] = m.Float64Histogram(AcquireWaitInstrument, metric.WithUnit(unitSeconds),
		metric.WithDescription(acquireWaitHelp), metric.WithExplicitBucketBoundaries(AcquireWaitBuckets()...))
	i.Renewals, errs[1] = m.Int64ObservableCounter(RenewalsInstrument, metric.WithUnit("{renewal}"),
		metric.WithDescription(renewalsHelp))
	i.Releases, errs[2] = m.Int64ObservableCounter(ReleasesInstrument, metric.WithUnit("{release}"),
		metric.WithDescription(releasesHelp))
	i.Abandoned, errs[3] = m.Int64ObservableCounter(AbandonedInstrument, metric.WithUnit("{lease}"),
		metric.WithDescription(abandonedHelp))
	i.HeldSeconds, errs[4] = m.Float64Histogram(HeldSecondsInstrument, metric.WithUnit(unitSeconds),
		metric.WithDescription(heldSecondsHelp), metric.WithExplicitBucketBoundaries(HeldSecondsBuckets()...))
	// An up-down counter, not a gauge: summed over Clients (and processes) it is still the number
	// of leases held. Its non-monotonic sum becomes a Prometheus gauge.
	i.Held, errs[5] = m.Int64ObservableUpDownCounter(HeldInstrument, metric.WithUnit("{lease}"),
		metric.WithDescription(heldHelp))
	i.FencedWrites, errs[6] = m.Int64ObservableCounter(FencedWritesInstrument, metric.WithUnit("{write}"),
		metric.WithDescription(fencedWritesHelp))
	i.Waiters, errs[7] = m.Int64ObservableUpDownCounter(WaitersInstrument, metric.WithUnit("{caller}"),
		metric.WithDescription(waitersHelp))
	i.HeldOldest, errs[8] = m.Float64ObservableGauge(HeldOldestInstrument, metric.WithUnit(unitSeconds),
		metric.WithDescription(heldOldestHelp))
	i.MaxHoldExceeded, errs[9] = m.Int64ObservableCounter(MaxHoldExceededInstrument, metric.WithUnit("{lease}"),
		metric.WithDescription(maxHoldHelp))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("lock metrics: create OTel instruments: %w", err)
	}
	reg, err := m.RegisterCallback(i.observe, i.Renewals, i.Releases, i.Abandoned, i.Held, i.FencedWrites,
		i.Waiters, i.HeldOldest, i.MaxHoldExceeded)
	if err != nil {
		return nil, fmt.Errorf("lock metrics: register OTel callback: %w", err)
	}
	i.registration = reg
	return i, nil
}

// Close stops reporting the observable series; the histograms stay the provider's.
func (i *Instruments) Close() error {
	if err := i.registration.Unregister(); err != nil {
		return fmt.Errorf("lock metrics: unregister OTel callback: %w", err)
	}
	return nil
}

// observe reports every observable series. Several Instruments on one provider (one per lease
// Client) each report theirs; the SDK adds up observations of one attribute set, so two Clients
// declaring the same namespace count together, as they do on a shared Prometheus registry.
func (i *Instruments) observe(_ context.Context, o metric.Observer) error {
	i.mu.Lock()
	before := i.onCollect
	i.mu.Unlock()
	if before != nil {
		before()
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, c := range i.counts {
		if c.fromFirstUse && !c.used.Load() {
			continue
		}
		o.ObserveInt64(c.instrument, c.n.Load(), c.opts...)
	}
	for _, a := range i.ages {
		age, _ := a.oldest() // 0 when nothing is held
		o.ObserveFloat64(i.HeldOldest, age.Seconds(), a.opts...)
	}
	return nil
}

// age makes attrs' lock_held_oldest_seconds series report oldest's age at every collection.
func (i *Instruments) age(attrs attribute.Set, oldest OldestFunc) {
	i.mu.Lock()
	i.ages = append(i.ages, observedAge{opts: []metric.ObserveOption{metric.WithAttributeSet(attrs)}, oldest: oldest})
	i.mu.Unlock()
}

// OnCollect makes f run at the start of every collection, before i's observable series are
// read. A producer whose state changes with time alone (observe's expiry sweep, which ends
// holds and waits) brings it up to date there, so that the collection that follows an expiry
// already shows it, the way a Prometheus collector that sweeps on scrape would. f may record
// on the histograms and change series; it must not create series (Counter, UpDown). A second
// call replaces f.
func (i *Instruments) OnCollect(f func()) {
	i.mu.Lock()
	i.onCollect = f
	i.mu.Unlock()
}

// Counter is one attribute set of an observable counter of i (Renewals, Releases, Abandoned or
// FencedWrites). It is reported from its creation, at 0 until its first event, as a
// client_golang child created with its labels is: rate() then counts the first increment
// instead of taking it as the series' start.
func (i *Instruments) Counter(c metric.Int64ObservableCounter, attrs attribute.Set) Counter {
	return i.track(c, attrs)
}

// UpDown is one attribute set of an observable up-down counter of i (Held, Waiters), as a Gauge.
func (i *Instruments) UpDown(u metric.Int64ObservableUpDownCounter, attrs attribute.Set) Gauge {
	return i.track(u, attrs)
}

// UpDownFromFirstUse is UpDown reported only from its first Inc: a producer that derives the
// series only where the traffic shows it (observe's waiters) leaves it absent until then rather
// than reporting a 0 it does not know.
func (i *Instruments) UpDownFromFirstUse(u metric.Int64ObservableUpDownCounter, attrs attribute.Set) Gauge {
	c := i.track(u, attrs)
	c.fromFirstUse = true
	return (*firstUseCount)(c)
}

func (i *Instruments) track(inst metric.Int64Observable, attrs attribute.Set) *observedCount {
	c := &observedCount{instrument: inst, opts: []metric.ObserveOption{metric.WithAttributeSet(attrs)}}
	i.mu.Lock()
	i.counts = append(i.counts, c)
	i.mu.Unlock()
	return c
}

// observedCount is a series of an observable instrument: the hot path changes an atomic, the
// callback reads it.
type observedCount struct {
	instrument metric.Int64Observable
	opts       []metric.ObserveOption
	n          atomic.Int64
	// fromFirstUse: reported only once used is set (UpDownFromFirstUse).
	fromFirstUse bool
	used         atomic.Bool
}

func (c *observedCount) Inc() { c.n.Add(1) }
func (c *observedCount) Dec() { c.n.Add(-1) }

// firstUseCount is an observedCount that its first Inc makes reported.
type firstUseCount observedCount

func (c *firstUseCount) Inc() {
	c.used.Store(true)
	c.n.Add(1)
}
func (c *firstUseCount) Dec() { c.n.Add(-1) }

// Observer, Counter and Gauge are what a producer does with one series. client_golang's
// children (prometheus.Observer, prometheus.Counter, prometheus.Gauge) satisfy them, and so do
// the OTel series below, so a producer's hot path is written once for both.
type (
	Observer interface{ Observe(float64) }
	Counter  interface{ Inc() }
	Gauge    interface {
		Inc()
		Dec()
	}
)

// Attributes are the OTel attributes of one series: lock_namespace and, when outcome is not
// empty, outcome. The set is built once, so a measurement does not sort or copy attributes.
func Attributes(namespace, outcome string) attribute.Set {
	if outcome == "" {
		return attribute.NewSet(attribute.String(NamespaceLabel, namespace))
	}
	return attribute.NewSet(attribute.String(NamespaceLabel, namespace), attribute.String("outcome", outcome))
}

// HistogramSeries is one attribute set of an OTel histogram, as an Observer.
func HistogramSeries(h metric.Float64Histogram, attrs attribute.Set) Observer {
	return otelObserver{h: h, opts: []metric.RecordOption{metric.WithAttributeSet(attrs)}}
}

// The histogram series record under context.Background(): the producers' hot paths carry no
// context to the metric call, and the contract has no exemplars.
type otelObserver struct {
	h    metric.Float64Histogram
	opts []metric.RecordOption
}

func (o otelObserver) Observe(v float64) { o.h.Record(context.Background(), v, o.opts...) }
