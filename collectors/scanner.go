package collectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// ErrScannerClosed is the Result error of a Scan called after Close.
var ErrScannerClosed = errors.New("collectors: scanner closed")

// Scanner scans the configured lock namespaces in Redis. It is safe for concurrent use:
// concurrent Scan calls share the pass in flight (extending its deadline to the latest of
// theirs), so N simultaneous scrapes cost Redis one pass, whatever their deadlines.
type Scanner struct {
	client   redis.UniversalClient
	opts     Options
	subs     []concern
	cls      *classifier
	typeScan *typeSupport
	replies  *replyClock

	// base parents every scan, so that a scan outlives the scrape that started it (later
	// scrapes may be waiting on it) while Close can still stop it.
	base   context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pass    *pass
	closed  bool
	running sync.WaitGroup

	// The index (ModeAuto): nil when every namespace is walked. index serves a single node (or
	// Sentinel's master), cluster a Redis Cluster, one index per master.
	index      *indexNode
	cluster    *clusterIndex
	budget     *keyBudget         // the indexes' key budget, shared by a cluster's masters
	life       *lifecycle.Tracker // the indexed namespaces' lock lifecycles, shared by a cluster's masters
	indexedPos []int              // Options.Namespaces position of each indexed namespace (bit order)
	walkWhy    map[int]string     // Options.Namespaces position → why it is walked, decided at start
	walkerMu   sync.Mutex
	walker     *Scanner // walks the namespaces the index does not serve, for this scrape
	walkerSet  uint64   // which of indexedPos walker also walks

	// logged is when each failure line of an indexed scrape was last logged (logMerged).
	logMu  sync.Mutex
	logged map[string]time.Time
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
	base, cancel := context.WithCancel(context.Background())
	s := &Scanner{
		client:   client,
		opts:     opts,
		subs:     newConcerns(),
		cls:      newClassifier(opts.Namespaces),
		typeScan: newTypeSupport(),
		replies:  newReplyClock(),
		base:     base,
		cancel:   cancel,
	}
	s.startIndex()
	return s, nil
}

// Options returns the options in effect, defaults applied.
func (s *Scanner) Options() Options { return s.opts }

// Scan returns what the pass in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first. The pass runs until it finishes or until its deadline: the latest of
// the deadlines of the calls sharing it, each the earlier of the call's ctx deadline and
// Options.Timeout. A call never shares a pass that would stop before its own deadline: it
// extends the pass in flight instead, so a client with a short timeout cannot cut another's
// scrape short, and a flood of such clients costs Redis one pass at a time.
func (s *Scanner) Scan(ctx context.Context) *Result {
	if idx := s.lockIndex(); idx != nil {
		return s.scanIndexed(ctx, idx)
	}
	// A pass's final Result is shared by every scrape that waited on it: label a copy.
	shared := s.scanWalk(ctx)
	res := *shared
	res.Namespaces = slices.Clone(shared.Namespaces)
	for i := range res.Namespaces {
		res.Namespaces[i].Mode = modeWalk
		res.Namespaces[i].ModeReason = s.walkWhy[i]
	}
	return &res
}

// scanWalk is Scan by a walk of the keyspace.
func (s *Scanner) scanWalk(ctx context.Context) *Result {
	now := time.Now()
	deadline := now.Add(s.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return closedResult(s.opts)
	}
	f := s.pass
	// A pass past its deadline has stopped sending commands and is only waiting for the last
	// replies: start afresh rather than hand its state to a new scrape.
	if f == nil || !f.extend(deadline) {
		f = newPass(s.base, s.opts, s.cls, s.replies, now, deadline)
		s.pass = f
		s.running.Add(1)
		go s.run(f)
	}
	s.mu.Unlock()

	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-f.done:
		return f.final
	case <-ctx.Done():
	case <-wait.C:
	}
	return f.snapshot(time.Now())
}

// Close stops a scan in flight and waits for it. Later Scan calls report ErrScannerClosed.
// The Redis client is the caller's to close.
func (s *Scanner) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.running.Wait()
	if idx := s.lockIndex(); idx != nil {
		idx.close()
	}
	s.walkerMu.Lock()
	if s.walker != nil {
		s.walker.Close()
	}
	s.walkerMu.Unlock()
}

func (s *Scanner) run(f *pass) {
	defer s.running.Done()
	if cc, ok := s.client.(*redis.ClusterClient); ok {
		ctx, cancel := f.commandContext(f.ctx)
		// fn records its own failures, so the only error left is loading the cluster's slot map.
		err := walk.ForEachMaster(ctx, cc, func(node *redis.Client) { s.scanNode(f, node) })
		cancel()
		if err != nil {
			f.failNode(err)
		}
	} else {
		s.scanNode(f, s.client)
	}
	f.passEnded(time.Now())
	s.readHolders(f)

	s.mu.Lock()
	if s.pass == f {
		s.pass = nil
	}
	s.mu.Unlock()
	f.finish(time.Now())
	if !s.opts.quietResult {
		s.logResult(f.final, nil)
	}
}

// logResult logs a failed scrape as one line, or each failed namespace as one. A line for
// which repeated (when not nil) reports true is left out.
func (s *Scanner) logResult(res *Result, repeated func(line string) bool) {
	if !res.Up {
		if repeated == nil || !repeated(fmt.Sprint(res.Err)) {
			s.opts.Logger.Warn("lock key scan failed", "err", res.Err)
		}
		return
	}
	for _, ns := range res.Namespaces {
		switch {
		case ns.Err != nil:
			if repeated == nil || !repeated(ns.Namespace.Name+"\x00"+ns.Err.Error()) {
				s.opts.Logger.Warn("lock key scan failed for one namespace", "lock_namespace", ns.Namespace.Name, "err", ns.Err)
			}
		case !ns.Complete:
			s.opts.Logger.Debug("lock key scan cut by its deadline", "lock_namespace", ns.Namespace.Name,
				"keys_seen", ns.Keys, "after", ns.Duration)
		}
	}
}

func closedResult(opts Options) *Result {
	res := &Result{Err: ErrScannerClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, NamespaceResult{Namespace: ns})
	}
	return res
}
