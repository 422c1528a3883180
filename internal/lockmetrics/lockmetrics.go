// Package lockmetrics defines the library half of the metric contract once: names, help texts,
// buckets and labels of the families that lease (our own locks) and observe (other libraries'
// locks, derived from the wire) register. One definition keeps the two producers identical, so
// the pack's rules and dashboards read either without knowing which one wrote the series.
package lockmetrics

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// NamespaceLabel is the lock namespace label of every family (not "namespace", which collides
// with the Kubernetes target label).
const NamespaceLabel = "lock_namespace"

// Label values of the outcome label. They are part of the metric contract.
const (
	OutcomeAcquired = "acquired"
	OutcomeBusy     = "busy"
	OutcomeError    = "error"
	OutcomeOK       = "ok"
	OutcomeFailed   = "failed"
	OutcomeNotOwned = "not_owned"
	OutcomeSkipped  = "skipped"
	OutcomeApplied  = "applied"
	OutcomeRejected = "rejected"
)

// Help texts, shared by the client_golang families and the OTel instruments (their
// descriptions), so both paths document a series the same way.
const (
	acquireWaitHelp  = "Time from an acquire call to its outcome (acquired, busy or error)."
	renewalsHelp     = "Lease renew attempts by outcome (ok, failed, not_owned)."
	releasesHelp     = "Lease releases by outcome (ok, not_owned, error, skipped); skipped means abandoned or held until expiry."
	abandonedHelp    = "Leases given up (fenced) after the renew-failure bound or a not-owned renew."
	heldSecondsHelp  = "Hold time of a lease, from acquire to its end: release, abandonment, MaxHold or expiry without a renew."
	heldHelp         = "Leases this process holds now."
	fencedWritesHelp = "Writes through the fencing guard by outcome (applied, rejected)."
	waitersHelp      = "Callers waiting to acquire now: their lock was busy at their first attempt (in Redis or in the local mutex) and they have no outcome yet."
	heldOldestHelp   = "Age of the oldest lease this process holds now, at collection time; 0 when it holds none."
	maxHoldHelp      = "Leases whose holder context was cancelled because they reached Policy.MaxHold; their keys are left to expire at their TTL."
)

// AcquireWaitBuckets are lock_acquire_wait_seconds' bucket bounds: from an uncontended round
// trip (sub-millisecond) up to AcquireTimeout (seconds). A fresh slice on every call.
func AcquireWaitBuckets() []float64 {
	return []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
}

// HeldSecondsBuckets are lock_held_seconds' bucket bounds: from a short approval
// (milliseconds) up to a long scheduler job (an hour). A fresh slice on every call.
func HeldSecondsBuckets() []float64 {
	return []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 3600}
}

// Families holds the library's metric families, shared by every namespace of a producer.
type Families struct {
	AcquireWait  *SweptHistogramVec
	Renewals     *SweptCounterVec
	Releases     *SweptCounterVec
	Abandoned    *prometheus.CounterVec
	HeldSeconds  *SweptHistogramVec
	Held         *SweptGaugeVec
	FencedWrites *prometheus.CounterVec
	// Beyond the contract's table: what a caller waits in, how old the oldest hold is, and
	// the holds Policy.MaxHold ended.
	Waiters         *SweptGaugeVec
	HeldOldest      *HoldAges
	MaxHoldExceeded *prometheus.CounterVec
}

// SweptGaugeVec is lock_held and lock_waiters: a GaugeVec whose collection first runs the
// hooks its producers added with BeforeCollect, in the same Collect call, so that a producer
// that brings the gauge up to date at scrape time (observe expires the locks whose keys
// expired, and the waits that lapsed) is read after it did, not beside it: a registry collects
// its collectors concurrently.
type SweptGaugeVec struct {
	*prometheus.GaugeVec
	CollectHooks
}

// Collect runs the hooks, then collects the gauges.
func (h *SweptGaugeVec) Collect(ch chan<- prometheus.Metric) {
	h.Run()
	h.GaugeVec.Collect(ch)
}

// SweptHistogramVec is lock_acquire_wait_seconds and lock_held_seconds with CollectHooks: a
// producer that records its events in batches (observe) applies the pending ones before the
// histograms are read.
type SweptHistogramVec struct {
	*prometheus.HistogramVec
	CollectHooks
}

// Collect runs the hooks, then collects the histograms.
func (h *SweptHistogramVec) Collect(ch chan<- prometheus.Metric) {
	h.Run()
	h.HistogramVec.Collect(ch)
}

// SweptCounterVec is lock_renewals_total and lock_releases_total with CollectHooks, as
// SweptHistogramVec.
type SweptCounterVec struct {
	*prometheus.CounterVec
	CollectHooks
}

// Collect runs the hooks, then collects the counters.
func (h *SweptCounterVec) Collect(ch chan<- prometheus.Metric) {
	h.Run()
	h.CounterVec.Collect(ch)
}

// CollectHooks are functions a family runs at every collection, in its own Collect call,
// before its values are read.
type CollectHooks struct {
	mu    sync.Mutex
	hooks []*collectHook
}

// collectHook is one hook, held by pointer so that its remove func finds it.
type collectHook struct{ run func() }

// BeforeCollect adds hook, run at every collection of the family before its values are read,
// until the returned func removes it (a producer that closes: the family outlives it on a
// shared registry).
func (h *CollectHooks) BeforeCollect(hook func()) (remove func()) {
	added := &collectHook{hook}
	h.mu.Lock()
	h.hooks = append(h.hooks, added)
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.hooks = slices.DeleteFunc(h.hooks, func(c *collectHook) bool { return c == added })
	}
}

// Run runs the hooks.
func (h *CollectHooks) Run() {
	h.mu.Lock()
	hooks := slices.Clone(h.hooks)
	h.mu.Unlock()
	for _, hook := range hooks {
		hook.run()
	}
}

// newFamilies builds the families, unregistered.
func newFamilies() *Families {
	return &Families{
		AcquireWait: &SweptHistogramVec{HistogramVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lock_acquire_wait_seconds",
			Help:    acquireWaitHelp,
			Buckets: AcquireWaitBuckets(),
		}, []string{NamespaceLabel, "outcome"})},
		Renewals: &SweptCounterVec{CounterVec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_renewals_total",
			Help: renewalsHelp,
		}, []string{NamespaceLabel, "outcome"})},
		Releases: &SweptCounterVec{CounterVec: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_releases_total",
			Help: releasesHelp,
		}, []string{NamespaceLabel, "outcome"})},
		Abandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_abandoned_total",
			Help: abandonedHelp,
		}, []string{NamespaceLabel}),
		HeldSeconds: &SweptHistogramVec{HistogramVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lock_held_seconds",
			Help:    heldSecondsHelp,
			Buckets: HeldSecondsBuckets(),
		}, []string{NamespaceLabel})},
		Held: &SweptGaugeVec{GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lock_held",
			Help: heldHelp,
		}, []string{NamespaceLabel})},
		FencedWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_fenced_writes_total",
			Help: fencedWritesHelp,
		}, []string{NamespaceLabel, "outcome"}),
		Waiters: &SweptGaugeVec{GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lock_waiters",
			Help: waitersHelp,
		}, []string{NamespaceLabel})},
		HeldOldest: newHoldAges(),
		MaxHoldExceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_max_hold_exceeded_total",
			Help: maxHoldHelp,
		}, []string{NamespaceLabel}),
	}
}

// Register builds the families and registers them on reg. Several producers may share one
// registry (a lease client per Redis deployment, or a lease client beside an observer); they
// then share the families too, instead of failing on the second registration.
func Register(reg prometheus.Registerer) (*Families, error) {
	f := newFamilies()
	var err error
	registerInto(reg, &f.AcquireWait, &err)
	registerInto(reg, &f.Renewals, &err)
	registerInto(reg, &f.Releases, &err)
	registerInto(reg, &f.Abandoned, &err)
	registerInto(reg, &f.HeldSeconds, &err)
	registerInto(reg, &f.Held, &err)
	registerInto(reg, &f.FencedWrites, &err)
	registerInto(reg, &f.Waiters, &err)
	registerInto(reg, &f.HeldOldest, &err)
	registerInto(reg, &f.MaxHoldExceeded, &err)
	if err != nil {
		return nil, fmt.Errorf("register lock metrics: %w", err)
	}
	return f, nil
}

// registerInto registers *c (or takes the identical collector registered before in its place)
// unless an earlier registration of the sequence failed, which *err then holds: the families
// after a failed one are left unregistered.
func registerInto[C prometheus.Collector](reg prometheus.Registerer, c *C, err *error) {
	if *err == nil {
		*c, *err = register(reg, *c)
	}
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
