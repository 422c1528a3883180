package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/redis/go-redis/v9"
)

// ErrScannerClosed is the Result error of a Scan called after Close.
var ErrScannerClosed = errors.New("collectors: scanner closed")

// ErrNoAnswer explains Up false when no command failed but some node never answered before the
// deadline: a paused or unreachable server whose connection attempts hang, or a deadline too
// short for the first reply of a healthy one. Only a later command can tell those apart.
var ErrNoAnswer = errors.New("redis did not answer before the scrape deadline")

// Scanner scans the configured lock namespaces in Redis. It is safe for concurrent use:
// concurrent Scan calls share the walk in flight (extending its deadline to the latest of
// theirs), so N simultaneous scrapes cost Redis one walk, whatever their deadlines.
type Scanner struct {
	client redis.UniversalClient
	opts   Options
	subs   []concern
	// walk reads the namespaces by a walk of the keyspace: all of them in ModeWalk, and the
	// index's builds and backstop walks.
	walk *walk.Walker
	// uncounted looks for keys of types the namespaces do not count (nil: not asked for).
	uncounted *uncountedTypes

	// base parents every scan and the index, so that a scan outlives the scrape that started it
	// (later scrapes may be waiting on it) while Close can still stop it.
	base   context.Context
	cancel context.CancelFunc

	running sync.WaitGroup // the look for uncounted types

	// index serves the namespaces it can from the lock-key index (ModeAuto); nil when every
	// namespace is walked.
	index *indexer
	// walkWhy is why each walked namespace is walked (by Options.Namespaces position), decided
	// at start.
	walkWhy map[int]string
}

// NewScanner validates opts, applies defaults and returns a Scanner reading through client.
// A *redis.ClusterClient is scanned master by master; any other client (single node, Sentinel
// failover) is scanned as one node. Give the client ContextTimeoutEnabled so that socket reads
// honour the scan deadline; Scan returns at its deadline either way.
func NewScanner(client redis.UniversalClient, opts Options) (*Scanner, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := newScanner(client, opts)
	s.startUncountedLook()
	return s, nil
}

// newScanner returns a Scanner reading through client with opts, which hold defaults and are
// valid.
func newScanner(client redis.UniversalClient, opts Options) *Scanner {
	base, cancel := context.WithCancel(context.Background())
	s := &Scanner{
		client: client,
		opts:   opts,
		subs:   newConcerns(),
		walk: walk.NewWalker(base, client, walkOptionsOf(opts, func(res *walk.Result) {
			logResult(opts.Logger, publicResult(res, opts.Namespaces), nil)
		})),
		base:   base,
		cancel: cancel,
	}
	s.walkWhy, s.index = startIndex(base, client, opts, s.walk)
	return s
}

// startUncountedLook runs the look in the background until Close, when Options asks for it.
func (s *Scanner) startUncountedLook() {
	if !s.opts.ReportUncountedTypes {
		return
	}
	u := newUncountedTypes(s.client, s.opts)
	s.uncounted = u
	s.subs = append(s.subs, newUncountedStats(u, s.opts.Namespaces))
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		u.loop(s.base)
	}()
}

// Options returns the options in effect, defaults applied.
func (s *Scanner) Options() Options { return s.opts }

// Scan returns what the walk in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first. The walk runs until it finishes or until its deadline: the latest of
// the deadlines of the calls sharing it, each the earlier of the call's ctx deadline and
// Options.Timeout. A call never shares a walk that would stop before its own deadline: it
// extends the walk in flight instead, so a client with a short timeout cannot cut another's
// scrape short, and a flood of such clients costs Redis one walk at a time.
func (s *Scanner) Scan(ctx context.Context) *Result {
	if s.index != nil {
		return s.index.scan(ctx)
	}
	return walkedCopy(s.walk.Scan(ctx), s.opts.Namespaces, s.walkWhy)
}

// closedResult is the Result of a scan after its Scanner closed: every namespace unknown.
func closedResult(opts Options) *Result {
	res := &Result{Err: ErrScannerClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, NamespaceResult{Namespace: ns})
	}
	return res
}

// Close stops a scan in flight and waits for it. Later Scan calls report ErrScannerClosed.
// The Redis client is the caller's to close.
func (s *Scanner) Close() {
	s.cancel()
	s.walk.Close()
	s.running.Wait()
	if s.index != nil {
		s.index.close()
	}
}

// logResult logs a failed scrape to log as one line, or each failed namespace as one. A line
// for which repeated (when not nil) reports true is left out.
func logResult(log *slog.Logger, res *Result, repeated func(line string) bool) {
	if !res.Up {
		if repeated == nil || !repeated(fmt.Sprint(res.Err)) {
			log.Warn("lock key scan failed", "err", res.Err)
		}
		return
	}
	for _, ns := range res.Namespaces {
		switch {
		case ns.Err != nil:
			if repeated == nil || !repeated(ns.Namespace.Name+"\x00"+ns.Err.Error()) {
				log.Warn("lock key scan failed for one namespace", "lock_namespace", ns.Namespace.Name, "err", ns.Err)
			}
		case !ns.Complete:
			log.Debug("lock key scan cut by its deadline", "lock_namespace", ns.Namespace.Name,
				"keys_seen", ns.Keys, "after", ns.Duration)
		}
	}
}
