package observe

import (
	"errors"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// Namespace maps lock keys to a lock_namespace label. Pattern uses Redis glob rules, exactly
// as the exporter's --namespace NAME=PATTERN does, so both halves of the pack agree on which
// key belongs where.
type Namespace struct {
	Name    string
	Pattern string
}

// Options configure an Observer.
type Options struct {
	// Registerer receives the contract's families. Required. A lease client may share it: the
	// families are then shared, and each producer writes its own lock_namespace series.
	Registerer prometheus.Registerer
	// Namespaces in order of precedence: a key is counted under the first that matches it.
	// Keys that match none pass through uncounted. At least one is required.
	Namespaces []Namespace
	// GiveUpAfter is how long after a caller's last busy attempt, with no further attempt
	// with the same lock value, the wait is taken as given up and observed with outcome
	// "busy". Zero means DefaultGiveUpAfter. It should exceed the library's longest retry
	// backoff, or one wait is counted as several busy ones.
	GiveUpAfter time.Duration
	// MaxTracked caps how many locks (held or waited for) are tracked at once. Beyond it new
	// locks are still counted in the counters, but not in lock_held or the histograms.
	// Zero means DefaultMaxTracked.
	MaxTracked int
}

// Defaults of Options.
const (
	DefaultGiveUpAfter = 2 * time.Second
	DefaultMaxTracked  = 100_000
)

// Sentinel errors of New.
var (
	ErrNoRegisterer = errors.New("observe: Options.Registerer is required")
	ErrNoNamespace  = errors.New("observe: at least one namespace is required")
	ErrBadNamespace = errors.New("observe: bad namespace")
)

// Observer derives lock metrics from the commands passing through its hooks. One Observer may
// serve several clients (every node of a redsync pool, say): a lock written to several servers
// under one value is then one lock.
type Observer struct {
	namespaces []*namespace
	scripts    *scriptTable
	tracker    *tracker
	seed       maphash.Seed
	now        func() time.Time
	dropped    prometheus.Counter
}

// namespace is one declared namespace with its metric children curried once.
type namespace struct {
	name, pattern string
	m             *nsMetrics
}

// New builds an Observer and registers its metrics. Every series the wire can derive is
// created at zero for each namespace; the ones it cannot (lock_abandoned_total,
// lock_fenced_writes_total, lock_releases_total{outcome="skipped"}) are left absent rather
// than shown as an invented zero.
func New(opts Options) (*Observer, error) {
	if opts.Registerer == nil {
		return nil, ErrNoRegisterer
	}
	if len(opts.Namespaces) == 0 {
		return nil, ErrNoNamespace
	}
	if err := validateNamespaces(opts.Namespaces); err != nil {
		return nil, err
	}
	fams, err := lockmetrics.Register(opts.Registerer)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	dropped, err := registerDropped(opts.Registerer)
	if err != nil {
		return nil, err
	}
	o := &Observer{
		scripts: newScriptTable(),
		seed:    maphash.MakeSeed(),
		now:     time.Now,
		dropped: dropped,
	}
	for _, ns := range opts.Namespaces {
		o.namespaces = append(o.namespaces, &namespace{name: ns.Name, pattern: ns.Pattern, m: curry(fams, ns.Name)})
	}
	o.tracker = newTracker(orDefault(opts.GiveUpAfter, DefaultGiveUpAfter), orDefault(opts.MaxTracked, DefaultMaxTracked), dropped)
	if err := opts.Registerer.Register(sweeper{o}); err != nil {
		return nil, fmt.Errorf("observe: register state sweeper: %w", err)
	}
	return o, nil
}

func validateNamespaces(nss []Namespace) error {
	seen := map[string]bool{}
	for _, ns := range nss {
		switch {
		case ns.Name == "":
			return fmt.Errorf("%w: empty name (pattern %q)", ErrBadNamespace, ns.Pattern)
		case ns.Pattern == "":
			return fmt.Errorf("%w: %q has an empty pattern", ErrBadNamespace, ns.Name)
		case seen[ns.Name]:
			return fmt.Errorf("%w: %q declared twice", ErrBadNamespace, ns.Name)
		}
		seen[ns.Name] = true
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// registerDropped registers the one family that is observe's own: locks not tracked because
// MaxTracked was reached. Shared like the contract's families when several Observers share a
// registry.
func registerDropped(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lock_observe_untracked_total",
		Help: "Locks the observe hook counted but did not track (held gauge, hold and wait times) because MaxTracked was reached.",
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

// namespaceOf returns the first namespace whose pattern matches key, or nil.
func (o *Observer) namespaceOf(key string) *namespace {
	for _, ns := range o.namespaces {
		if globMatch(ns.pattern, key) {
			return ns
		}
	}
	return nil
}

// Tracked reports how many locks are held or waited for in the Observer's state now: the
// number the MaxTracked cap bounds.
func (o *Observer) Tracked() int { return o.tracker.size() }

// sweeper brings the tracker up to date (expired leases, given-up waits) when the registry is
// scraped, so a process that stops sending lock commands still sees lock_held fall back by the
// next scrape. It describes nothing, so it is an unchecked collector that emits no metric.
type sweeper struct{ o *Observer }

func (sweeper) Describe(chan<- *prometheus.Desc) {}

func (s sweeper) Collect(chan<- prometheus.Metric) { s.o.tracker.sweep(s.o.now(), true) }
