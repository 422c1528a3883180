package collectors

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/lockns"
)

// Defaults applied by NewScanner to zero-valued Options fields.
const (
	// DefaultBatchSize is the SCAN COUNT hint and the most keys in one PTTL/OBJECT IDLETIME
	// pipeline.
	DefaultBatchSize = 1000
	// DefaultMaxKeys caps the keys examined per namespace and scan: 100k keys cost Redis about
	// 200k cheap commands, a bounded share even of a 15s scrape interval (deploy/ uses 30s).
	DefaultMaxKeys = 100_000
	// DefaultTopK is how many of the stalest keys per namespace get their own series.
	DefaultTopK = 5
	// DefaultTakeoverWindow is how soon after a key's hold ended expired or overwritten its next
	// acquisition counts as a takeover: a worker that lost its lease finds out at its next
	// renewal or write, typically within a TTL or two, and the window covers the common TTLs.
	DefaultTakeoverWindow = 5 * time.Minute
	// DefaultTimeout is the longest one scan may run when the caller's context has no earlier
	// deadline; it matches Prometheus' default scrape timeout.
	DefaultTimeout = 10 * time.Second
)

// Upper bounds of Options, enforced by NewScanner. The command-line and configuration-file
// settings share them, so a value the scanner would refuse is an exit-2 error at start-up.
const (
	// MaxTopK bounds TopK. lock_key_idle_seconds has one series per namespace and key, and its
	// key label changes as locks come and go, so each scrape can start up to K new series per
	// namespace that Prometheus keeps in its head block for hours. A hundred is more than a
	// dashboard table of stalled holders shows, and keeps the worst case at 100 series per
	// namespace; beyond it the aggregate metrics and `lock-exporter inspect` are the tools. The
	// top-K heap and its index are also sized by K for every namespace on every scan.
	MaxTopK = 100
	// MaxBatchSize bounds BatchSize, which is both the SCAN COUNT hint and the pipeline size. A
	// SCAN call is atomic in Redis and its work grows with COUNT (up to ten bucket visits per
	// key asked for), so it blocks every lock acquirer for its whole duration, which grows with
	// COUNT at SCAN's per-key cost (measured in docs/performance.md). A batch is also
	// 2 × BatchSize commands written and read at once, and a pass holds about seven batches per
	// node in memory. Batches larger than the default measured no faster (docs/performance.md),
	// so the bound takes nothing useful away.
	MaxBatchSize = 10_000
)

// ErrInvalidOptions is matched (errors.Is) by every validation error of Options and Namespace.
var ErrInvalidOptions = errors.New("invalid collector options")

// optionsError is a validation error of Options or Namespace. Problem is the message without
// ErrInvalidOptions' words, for a caller that names the kind of error itself: lock-exporter
// reports a bad namespace as a configuration error, and reads Problem through an interface
// (errors.As with interface{ Problem() string }) so that no error type joins the API.
type optionsError struct{ problem string }

func (e *optionsError) Error() string        { return ErrInvalidOptions.Error() + ": " + e.problem }
func (e *optionsError) Is(target error) bool { return target == ErrInvalidOptions }
func (e *optionsError) Problem() string      { return e.problem }

func invalidOptions(format string, args ...any) error {
	return &optionsError{problem: fmt.Sprintf(format, args...)}
}

// Namespace is one family of lock keys, reported under its own lock_namespace label.
type Namespace struct {
	// Name is the lock_namespace label value: non-empty printable UTF-8, at most 128 bytes.
	Name string
	// Pattern is a Redis glob, e.g. "cordum:scheduler:job:*", matched with the semantics of
	// SCAN MATCH (the scan classifies keys itself, as the server would).
	Pattern string
	// ExpectedTTL is the lease TTL the namespace's owners use; zero means not declared, and
	// lock_expected_ttl_seconds is then not exported.
	ExpectedTTL time.Duration
	// ExpectedRenewInterval is how often owners renew; zero means not declared, and
	// lock_expected_renew_interval_seconds is then not exported.
	ExpectedRenewInterval time.Duration
	// ExpectedMaxHold is the longest a lease of the namespace should be held; zero means not
	// declared. Declaring it exports lock_expected_max_hold_seconds and makes the scan read the
	// holder record ({L}:holder, written by lease with Policy.RecordHolder) of each of the
	// namespace's keys, one GET per key, for lock_key_held_seconds and
	// lock_key_held_max_seconds.
	ExpectedMaxHold time.Duration
	// Types are the Redis value types that count as locks of this namespace: TypeString
	// (SET NX locks: lease, bsm/redislock, redsync) and/or TypeHash (Redisson keeps its locks in
	// hashes). Empty means [TypeString]. Keys of other types under the pattern are ignored.
	Types []string
	// TakeoverWindow: an acquisition of a key less than this after its hold ended expired or
	// overwritten is a takeover (lock_key_takeovers_total). Zero means Options.TakeoverWindow.
	TakeoverWindow time.Duration
	// EndsByExpiry declares that the namespace's holds end by expiry on purpose (a lock held
	// until its TTL, a reconciler whose expiry rotates ownership): its expiries are counted as
	// expired ends, but no acquisition after one is a takeover, and
	// lock_exporter_lifecycle_ends_by_expiry is 1 so that lapse alerts leave it out.
	EndsByExpiry bool
}

// Value types a namespace may declare (the names TYPE and SCAN ... TYPE use).
const (
	TypeString = "string"
	TypeHash   = "hash"
)

// wants reports whether keys of Redis type typ count as locks of the namespace.
func (n Namespace) wants(typ string) bool { return walk.Namespace{Types: n.Types}.Wants(typ) }

// stringsOnly reports whether the namespace counts string keys and nothing else.
func (n Namespace) stringsOnly() bool {
	for _, t := range n.Types {
		if t != TypeString {
			return false
		}
	}
	return true
}

// walkNamespaces describes namespaces as the walk sorts keys into them.
func walkNamespaces(namespaces []Namespace) []walk.Namespace {
	out := make([]walk.Namespace, len(namespaces))
	for i, ns := range namespaces {
		out[i] = walk.Namespace{Name: ns.Name, Pattern: ns.Pattern, Types: ns.Types, StringsOnly: ns.stringsOnly(),
			ReadsHolders: ns.ExpectedMaxHold > 0}
	}
	return out
}

// walkOptionsOf is what a walk reads of opts, which hold defaults and are valid; report, when
// not nil, receives each walk's final result.
func walkOptionsOf(opts Options, report func(*walk.Result)) walk.Options {
	return walk.Options{
		Namespaces: walkNamespaces(opts.Namespaces),
		BatchSize:  opts.BatchSize,
		MaxKeys:    opts.MaxKeys,
		TopK:       opts.TopK,
		Timeout:    opts.Timeout,
		FullKeys:   opts.FullKeys,
		Soonest:    opts.Soonest,
		Logger:     opts.Logger,
		Report:     report,
	}
}

// Options configures a Scanner. Zero values take the documented defaults.
type Options struct {
	// Namespaces to scan; at least one, names unique.
	Namespaces []Namespace
	// BatchSize is the SCAN COUNT hint and the pipeline size (default DefaultBatchSize, at most
	// MaxBatchSize).
	BatchSize int
	// MaxKeys caps the keys inspected per namespace in one scan (default DefaultMaxKeys). When
	// it is reached the namespace is reported as truncated, with what was seen so far. It bounds
	// the per-key commands, not the SCAN walk, which goes on for the other namespaces (and stops
	// once every namespace has reached its cap).
	MaxKeys int
	// TopK is the number of stalest keys per namespace reported by key (default DefaultTopK, at
	// most MaxTopK).
	TopK int
	// Timeout is the ceiling of one scan (default DefaultTimeout); a context deadline that comes
	// earlier wins.
	Timeout time.Duration
	// FullKeys keeps whole key names in the top-K lists (for inspect, which prints a handful
	// once). Otherwise a kept key is cut to 128 bytes, its label computed from the
	// whole key first, so that a namespace of megabyte key names holds kilobytes, not megabytes.
	FullKeys bool
	// Soonest keeps, beside the stalest, the TopK keys with the shortest remaining TTL of each
	// namespace (NamespaceResult.Soonest), for inspect --sort ttl. Off for the exporter.
	Soonest bool
	// Mode chooses how namespaces are read: ModeWalk (the zero value, as before the index)
	// walks the keyspace on every scrape; ModeAuto keeps a lock-key index current from Redis's
	// change feed where it can and walks elsewhere (lock-exporter's default). See scan_mode.go.
	Mode ScanMode
	// IndexKeyBudget is the most keys the index may hold, every namespace together (default
	// DefaultIndexKeyBudget); when it would hold more, the namespace with the most keys goes
	// back to the per-scrape walk until it fits in half the budget again.
	IndexKeyBudget int
	// Feed chooses the index's change feed (default FeedAuto): RESP3 client tracking or
	// keyspace notifications. See internal/index/feed_source.go.
	Feed FeedSource
	// BackstopKeysPerSecond paces the index's backstop walk, which corrects (and counts) what
	// the change feed missed (default DefaultBackstopKeysPerSecond; negative: no backstop walk).
	BackstopKeysPerSecond int
	// BackstopEvery is the rest from the end of one backstop walk to the start of the next
	// (default DefaultBackstopEvery).
	BackstopEvery time.Duration
	// TakeoverWindow is the takeover window of the namespaces that set none (default
	// DefaultTakeoverWindow).
	TakeoverWindow time.Duration
	// Logger receives scan failures; nil discards them.
	Logger *slog.Logger
	// ReportUncountedTypes looks, at start and then every BackstopEvery, for keys that a
	// namespace's pattern matches but whose type it does not count (a Redisson hash under a
	// namespace of strings), in the background and bounded (uncounted_types.go): it logs one
	// hint per namespace and exports lock_exporter_namespace_uncounted_keys.
	ReportUncountedTypes bool

	// moveWaitMax is how long a master whose slots are moving waits for the move to end
	// (index.DefaultMoveWaitMax); the package's tests shorten it.
	moveWaitMax time.Duration
	// onEvents, when set, receives after each drain of a keyspace-notifications feed the
	// events of every lock key it named (feed_events.go).
	onEvents EventsFunc
	// recordHoldAgesOnly: the index serves hold ages from holder records alone, as a walk reads
	// them, and not from the holds its change feed saw begin; for the package's tests that
	// compare the index with a walk.
	recordHoldAgesOnly bool
}

func (o Options) withDefaults() Options {
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.MaxKeys == 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.TopK == 0 {
		o.TopK = DefaultTopK
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Mode == "" {
		o.Mode = ModeWalk
	}
	if o.IndexKeyBudget == 0 {
		o.IndexKeyBudget = DefaultIndexKeyBudget
	}
	if o.Feed == "" {
		o.Feed = FeedAuto
	}
	if o.BackstopKeysPerSecond == 0 {
		o.BackstopKeysPerSecond = DefaultBackstopKeysPerSecond
	}
	if o.BackstopEvery == 0 {
		o.BackstopEvery = DefaultBackstopEvery
	}
	if o.TakeoverWindow == 0 {
		o.TakeoverWindow = DefaultTakeoverWindow
	}
	if o.moveWaitMax == 0 {
		o.moveWaitMax = index.DefaultMoveWaitMax
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	if len(o.Namespaces) == 0 {
		return invalidOptions("no namespace configured")
	}
	seen := make(map[string]bool, len(o.Namespaces))
	for _, ns := range o.Namespaces {
		if err := ns.Validate(); err != nil {
			return err
		}
		if seen[ns.Name] {
			return invalidOptions("duplicate namespace name %q", ns.Name)
		}
		seen[ns.Name] = true
	}
	for _, f := range []struct {
		name  string
		value int
		max   int // 0: no upper bound (MaxKeys only counts, it allocates nothing)
	}{{"batch size", o.BatchSize, MaxBatchSize}, {"max keys", o.MaxKeys, 0}, {"top-k", o.TopK, MaxTopK}, {"index key budget", o.IndexKeyBudget, 0}} {
		if f.value < 1 {
			return invalidOptions("%s must be at least 1, got %d", f.name, f.value)
		}
		if f.max > 0 && f.value > f.max {
			return invalidOptions("%s must be at most %d, got %d", f.name, f.max, f.value)
		}
	}
	if o.Timeout <= 0 {
		return invalidOptions("timeout must be positive, got %s", o.Timeout)
	}
	if o.BackstopEvery < 0 {
		return invalidOptions("backstop interval must not be negative, got %s", o.BackstopEvery)
	}
	if o.TakeoverWindow < 0 {
		return invalidOptions("takeover window must not be negative, got %s", o.TakeoverWindow)
	}
	if o.Mode != ModeAuto && o.Mode != ModeWalk {
		return invalidOptions("scan mode %q is not %q or %q", o.Mode, ModeAuto, ModeWalk)
	}
	if _, err := ParseFeedSource(string(o.Feed)); err != nil {
		return invalidOptions("%v", err)
	}
	return nil
}

// Validate reports the first problem with the namespace's name, pattern or expectations.
func (n Namespace) Validate() error {
	// Name and pattern by the rules observe shares (internal/lockns).
	if err := lockns.Validate(n.Name, n.Pattern); err != nil {
		return invalidOptions("%v", err)
	}
	for _, t := range n.Types {
		if t != TypeString && t != TypeHash {
			return invalidOptions("namespace %q: type %q is not %q or %q", n.Name, t, TypeString, TypeHash)
		}
	}
	if n.ExpectedTTL < 0 {
		return invalidOptions("namespace %q: expected TTL %s is negative", n.Name, n.ExpectedTTL)
	}
	if n.ExpectedRenewInterval < 0 {
		return invalidOptions("namespace %q: expected renew interval %s is negative", n.Name, n.ExpectedRenewInterval)
	}
	if n.ExpectedMaxHold < 0 {
		return invalidOptions("namespace %q: expected max hold %s is negative", n.Name, n.ExpectedMaxHold)
	}
	if n.TakeoverWindow < 0 {
		return invalidOptions("namespace %q: takeover window %s is negative", n.Name, n.TakeoverWindow)
	}
	if n.ExpectedTTL > 0 && n.ExpectedRenewInterval >= n.ExpectedTTL {
		return invalidOptions("namespace %q: expected renew interval %s must be shorter than expected TTL %s", n.Name, n.ExpectedRenewInterval, n.ExpectedTTL)
	}
	return nil
}

// printable is lockns.Printable, for the label checks of this package.
func printable(s string) bool { return lockns.Printable(s) }
