package collectors

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// FeedSource says what keeps the lock-key index current.
type FeedSource string

const (
	// FeedAuto follows keyspace notifications where CONFIG GET shows the server publishes
	// every event the index needs, else client tracking; a server that refuses both is walked.
	FeedAuto FeedSource = "auto"
	// FeedTracking follows RESP3 client tracking (CLIENT TRACKING ON BCAST).
	FeedTracking FeedSource = "tracking"
	// FeedNotifications follows keyspace notifications (PSUBSCRIBE __keyspace@<db>__:<prefix>*),
	// and trusts the operator where CONFIG GET is refused.
	FeedNotifications FeedSource = "notifications"
)

// ParseFeedSource parses the --scan.feed value.
func ParseFeedSource(s string) (FeedSource, error) {
	switch f := FeedSource(strings.TrimSpace(s)); f {
	case FeedAuto, FeedTracking, FeedNotifications:
		return f, nil
	}
	return "", fmt.Errorf("scan feed %q is not %q, %q or %q", s, FeedAuto, FeedTracking, FeedNotifications)
}

// EventsFunc receives, after a drain of a keyspace-notifications feed has re-read them, the
// events of each lock key the feed named, in the order Redis published them ("set", "del",
// "expire", "expired", "evicted", "hset", "rename_from", ...): mask is the key's indexed
// namespaces (bit b is Options.Namespaces' b-th indexed one), at the drain's instant by the
// server's clock, in Unix milliseconds. Companion keys (fence, holder) are not passed. It runs
// under the node's lock: it must not call back into the Scanner.
type EventsFunc func(key string, mask uint64, events []string, at int64)

// DefaultBackstopKeysPerSecond paces the backstop walk: the keys per second its SCAN visits. At
// about 1 µs of Redis CPU per key visited (a walk of 10M keys costs 10.8 s), 2000 keys/s cost
// Redis about 2 ms a second, 65 ms per 30 s scrape interval, on any keyspace: a 10M-key database is
// walked in 83 minutes. Measured in docs/performance-exporter.md.
const DefaultBackstopKeysPerSecond = 2000

// DefaultBackstopEvery is the rest from the end of one backstop walk to the start of the next,
// so that a small keyspace is not walked over and over and a keyspace that takes longer than
// that to walk at the backstop's pace is not walked without a pause either.
const DefaultBackstopEvery = 10 * time.Minute

// feedKindOf is the feed kind an index node reads for the source Options.Feed asks for.
func feedKindOf(s FeedSource) index.FeedKind {
	switch s {
	case FeedTracking:
		return index.FeedKindTracking
	case FeedNotifications:
		return index.FeedKindNotifications
	}
	return index.FeedKindAuto
}

// indexOptionsOf is what the nodes indexing the namespaces indexed read of opts, which hold
// defaults and are valid.
func indexOptionsOf(opts Options, indexed []Namespace) index.Options {
	scrape := walkOptionsOf(opts, nil)
	scrape.Namespaces = walkNamespaces(indexed)
	w := scrape
	w.MaxKeys = opts.IndexKeyBudget
	return index.Options{
		Namespaces: w.Namespaces, Walk: w, Scrape: scrape, KeyBudget: opts.IndexKeyBudget,
		BackstopKeysPerSecond: opts.BackstopKeysPerSecond, BackstopEvery: opts.BackstopEvery,
		Feed: feedKindOf(opts.Feed), MoveWaitMax: opts.moveWaitMax, OnEvents: index.EventsFunc(opts.onEvents),
		RecordHoldAgesOnly: opts.recordHoldAgesOnly, Logger: opts.Logger,
	}
}

// newLifecycleTracker is the tracker of the indexed namespaces. Recent ends (for the takeover
// window) are bounded by an eighth of the key budget: each costs about as much as an index entry.
func newLifecycleTracker(indexed []Namespace, opts Options) *lifecycle.Tracker {
	settings := make([]lifecycle.Settings, len(indexed))
	for i, ns := range indexed {
		settings[i] = lifecycle.Settings{TakeoverWindow: ns.TakeoverWindow, EndsByExpiry: ns.EndsByExpiry}
		if settings[i].TakeoverWindow == 0 {
			settings[i].TakeoverWindow = opts.TakeoverWindow
		}
	}
	return lifecycle.New(lifecycle.Config{
		Namespaces:    settings,
		Buckets:       lockmetrics.HeldSecondsBuckets(),
		MaxRecentEnds: max(1024, index.LifecycleAside(opts.IndexKeyBudget)),
	})
}
