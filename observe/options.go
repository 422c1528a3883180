package observe

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
	"github.com/lockwatch/lockwatch/internal/lockns"
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
	// Registerer receives the contract's families. It or MeterProvider is required. A lease
	// client may share it: the families are then shared, and each producer writes its own
	// lock_namespace series.
	Registerer prometheus.Registerer
	// MeterProvider is the alternative to Registerer for an application instrumented with
	// OpenTelemetry, with the same semantics as lease.Options.MeterProvider: the same series
	// become OTel instruments on the meter "github.com/lockwatch/lockwatch" (the ones lease
	// creates, plus lock_observe_untracked), named so that Prometheus' OTLP translation gives
	// the same names and labels (see docs/metrics.md). The Observer starts no exporter. Nil
	// means no OTel metrics; pass otel.GetMeterProvider() for the global one. Setting both
	// Registerer and MeterProvider is an error: one process, one path. Close the Observer
	// when dropping it.
	MeterProvider metric.MeterProvider
	// Namespaces, as the exporter declares them: a key is counted in every namespace whose
	// pattern matches it (a lock on jobs:urgent:1 in both jobs:* and jobs:urgent:*), as the
	// exporter counts it. Keys that match none pass through uncounted. At least one is required.
	Namespaces []Namespace
	// GiveUpAfter is how long after a caller's last busy attempt, with no further attempt
	// with the same lock value, the wait is taken as given up and observed with outcome
	// "busy". Zero means DefaultGiveUpAfter. It should exceed the library's longest retry
	// backoff, or one wait is counted as several busy ones.
	GiveUpAfter time.Duration
	// MaxTracked caps how many locks (held or waited for) are tracked at once. Beyond it new
	// locks are still counted in the counters and their acquires in the wait histogram, but
	// not in lock_held or the hold histogram, and lock_observe_untracked_total counts them.
	// Each namespace a key belongs to tracks it once. Zero means DefaultMaxTracked.
	MaxTracked int
}

// Defaults of Options.
const (
	DefaultGiveUpAfter = 2 * time.Second
	DefaultMaxTracked  = 100_000
)

// Sentinel errors of New.
var (
	ErrNoRegisterer     = errors.New("observe: Options.Registerer or Options.MeterProvider is required")
	ErrBothMetricsPaths = errors.New("observe: set Options.Registerer or Options.MeterProvider, not both")
	ErrNoNamespace      = errors.New("observe: at least one namespace is required")
	ErrBadNamespace     = errors.New("observe: bad namespace")
	// ErrBadOption: GiveUpAfter or MaxTracked is negative (zero takes the default).
	ErrBadOption = errors.New("observe: bad option")
)

// Observer derives lock metrics from the commands passing through its hooks. One Observer may
// serve several clients (every node of a redsync pool, say): a lock written to several servers
// under one value is then one lock.
type Observer struct {
	namespaces []*namespace
	scripts    *scriptTable
	partNames  *partNames
	tracker    *tracker
	seed       maphash.Seed
	// clock is the hook path's time source, held in the Observer rather than behind a
	// function value: each reading on a real cycle's cold caches would otherwise chase a
	// closure and the clock it binds first. testNow replaces it in tests (see now).
	clock   clock
	testNow func() time.Time
	metrics metricsPath
	// unknownSHA counts EVALSHA calls on a namespace's key whose script this process never saw
	// and knownScripts does not list: lock operations it cannot tell from anything else.
	unknownSHA lockmetrics.Counter
	hooks      atomic.Uint32 // hooks handed out: each one's number tells its server apart
	closeOnce  sync.Once
	closeErr   error
}

// namespace is one declared namespace with its metric children curried once.
type namespace struct {
	name, pattern string
	keys          keyMatcher // the pattern, read once
	idx           int        // its place in Observer.namespaces: the ones after it may match too
	m             *nsMetrics
	// Guarded by the tracker's lock: the longest interval seen between two tries of one wait,
	// and whether values were seen shared by several callers (see waiter).
	retryGap     time.Duration
	sharedValues bool
}

// New builds an Observer and registers its metrics on the Registerer or MeterProvider. Every
// counter and lock_held the wire can derive is created at zero for each namespace (and, with a
// Registerer, the histograms too); the ones it cannot (lock_abandoned_total,
// lock_fenced_writes_total, lock_releases_total{outcome="skipped"}) are left absent rather
// than shown as an invented zero.
func New(opts Options) (*Observer, error) {
	if err := validateOptions(opts); err != nil {
		return nil, err
	}
	metrics, err := newMetricsPath(opts)
	if err != nil {
		return nil, err
	}
	o := &Observer{
		scripts:    newScriptTable(),
		partNames:  newPartNames(),
		seed:       maphash.MakeSeed(),
		metrics:    metrics,
		unknownSHA: metrics.unclassified(),
	}
	o.clock.start()
	// Before the namespaces: a scrape may ask the tracker for their oldest holds as soon as
	// they are bound.
	o.tracker = newTracker(orDefault(opts.GiveUpAfter, DefaultGiveUpAfter), orDefault(opts.MaxTracked, DefaultMaxTracked), metrics.untracked())
	o.tracker.hooks = &o.hooks
	for _, ns := range opts.Namespaces {
		n := &namespace{name: ns.Name, pattern: ns.Pattern, keys: newKeyMatcher(ns.Pattern), idx: len(o.namespaces)}
		n.m = metrics.namespace(ns.Name, func() (time.Duration, bool) { return o.tracker.oldestHeld(n, o.now()) })
		o.namespaces = append(o.namespaces, n)
	}
	// Last: a scrape may sweep as soon as this returns, and needs the tracker.
	if err := metrics.sweepOnCollect(func() { o.tracker.sweep(o.now(), true) }, o.tracker.flush); err != nil {
		return nil, errors.Join(err, metrics.close())
	}
	return o, nil
}

func validateOptions(opts Options) error {
	switch {
	case opts.Registerer != nil && opts.MeterProvider != nil:
		return ErrBothMetricsPaths
	case opts.Registerer == nil && opts.MeterProvider == nil:
		return ErrNoRegisterer
	case len(opts.Namespaces) == 0:
		return ErrNoNamespace
	case opts.GiveUpAfter < 0:
		return fmt.Errorf("%w: GiveUpAfter %s must be positive (zero: %s)", ErrBadOption, opts.GiveUpAfter, DefaultGiveUpAfter)
	case opts.MaxTracked < 0:
		// Below zero no lock would ever be tracked: lock_held and the hold histogram would stay
		// empty while every lock counted as untracked.
		return fmt.Errorf("%w: MaxTracked %d must be positive (zero: %d)", ErrBadOption, opts.MaxTracked, DefaultMaxTracked)
	}
	return validateNamespaces(opts.Namespaces)
}

// newMetricsPath builds the path opts ask for; validateOptions has checked there is one.
func newMetricsPath(opts Options) (metricsPath, error) {
	if opts.MeterProvider != nil {
		return newOTelPath(opts.MeterProvider)
	}
	return newPromPath(opts.Registerer)
}

// Close stops reporting the Observer's metrics where they are registered outside it: with a
// MeterProvider, its counters, lock_held and lock_observe_untracked stop being reported (their
// callbacks are unregistered; the histograms are the provider's). With a Registerer the
// families stay, with their counts, as other producers may share them, but the Observer leaves
// them: its holds no longer count in lock_held_oldest_seconds and its scrape-time sweep no
// longer runs, so a registry does not keep a closed Observer reachable. The hook keeps passing
// commands through. Calling Close again returns the first call's error.
func (o *Observer) Close() error {
	o.closeOnce.Do(func() { o.closeErr = o.metrics.close() })
	return o.closeErr
}

// validateNamespaces checks names and patterns by the exporter's rules and with its messages
// (internal/lockns), so a declaration one accepts the other accepts too.
func validateNamespaces(nss []Namespace) error {
	seen := map[string]bool{}
	for _, ns := range nss {
		if err := lockns.Validate(ns.Name, ns.Pattern); err != nil {
			return fmt.Errorf("%w: %w", ErrBadNamespace, err)
		}
		if seen[ns.Name] {
			return fmt.Errorf("%w: duplicate namespace name %q", ErrBadNamespace, ns.Name)
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

// namespaceOf returns the first namespace whose pattern matches key, or nil. A key belongs to
// every namespace whose pattern matches it (as the exporter counts it): nextNamespace finds
// the others, when the call is done, so that the common single match costs no more.
func (o *Observer) namespaceOf(key string) *namespace {
	return o.nextNamespace(key, 0)
}

// nextNamespace returns the first namespace from o.namespaces[from:] that matches key, or nil.
func (o *Observer) nextNamespace(key string, from int) *namespace {
	for _, ns := range o.namespaces[from:] {
		// SCAN MATCH's rule, as the exporter classifies keys: "*" also matches the empty key.
		if ns.keys.match(key) {
			return ns
		}
	}
	return nil
}

// now reads the Observer's clock.
func (o *Observer) now() time.Time {
	if o.testNow != nil {
		return o.testNow()
	}
	return o.clock.now()
}

// Tracked reports how many locks are held or waited for in the Observer's state now: the
// number the MaxTracked cap bounds.
func (o *Observer) Tracked() int { return o.tracker.size() }
