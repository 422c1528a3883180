package collectors

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"sync"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/redis/go-redis/v9"
)

// indexer serves the indexed namespaces of a Scanner from the lock-key index, and walks the
// others (and any the index cannot serve this time) beside it, with a walker of its own.
type indexer struct {
	client redis.UniversalClient
	opts   Options
	// nodeOpts is what the index nodes read of opts, for the indexed namespaces.
	nodeOpts index.Options
	// walk is the Scanner's walker: the index's builds and backstop walks are its walks.
	walk *walk.Walker
	// base ends with the Scanner: every index goroutine and scan is under it.
	base context.Context

	// node serves a single node (or Sentinel's master), cluster a Redis Cluster, one index per
	// master; exactly one is set.
	node       *index.Node
	cluster    *index.Cluster
	budget     *index.KeyBudget   // the indexes' key budget, shared by a cluster's masters
	life       *lifecycle.Tracker // the indexed namespaces' lock lifecycles, shared by a cluster's masters
	indexedPos []int              // Options.Namespaces position of each indexed namespace (bit order)
	walkWhy    map[int]string     // Options.Namespaces position → why it is walked, decided at start
	walkerMu   sync.Mutex
	walker     *walk.Walker // walks the namespaces the index does not serve, for this scrape
	walkerSet  uint64       // which of indexedPos walker also walks

	// lifeResyncs is the index's resync count at the last lifecycle report: a resync since then
	// means the counters missed what changed during it.
	mu          sync.Mutex
	lifeResyncs int64

	// logged is when each failure line of an indexed scrape was last logged (logMerged).
	logMu  sync.Mutex
	logged map[string]time.Time
}

// startIndex decides, at NewScanner, which namespaces the index can serve, logs one line for
// each that it cannot, and starts the index: the node's, or on Redis Cluster one per master. A
// namespace is walked when --scan.mode=walk, when its pattern has no literal prefix (tracking
// would be told about every key), and beyond the 64th indexed namespace. It returns why each
// walked namespace is walked, and the indexer (nil when every namespace is walked).
func startIndex(base context.Context, client redis.UniversalClient, opts Options, w *walk.Walker) (map[int]string, *indexer) {
	ix := &indexer{client: client, opts: opts, walk: w, base: base}
	indexed := ix.decideModes()
	if len(indexed) == 0 {
		return ix.walkWhy, nil
	}
	patterns := make([]string, len(indexed))
	for i, ns := range indexed {
		patterns[i] = ns.Pattern
	}
	prefixes, _ := index.TrackingPrefixes(patterns) // every pattern here has a literal prefix
	ix.nodeOpts = indexOptionsOf(opts, indexed)
	ix.budget = index.NewKeyBudget(opts.IndexKeyBudget, ix.nodeOpts.Namespaces, opts.Logger)
	ix.life = newLifecycleTracker(indexed, opts)
	switch c := client.(type) {
	case *redis.ClusterClient:
		ix.cluster = index.NewCluster(ix.indexEnv(), c, prefixes)
	case *redis.Client:
		ix.node = index.NewNode(ix.indexEnv(), c, prefixes)
	}
	return ix.walkWhy, ix
}

// indexEnv is what the Scanner gives each index node it starts; the key budget is made first.
func (ix *indexer) indexEnv() index.Env {
	return index.Env{Opts: ix.nodeOpts, Budget: ix.budget, Replies: ix.walk.Replies(), Walker: ix.walk, Base: ix.base, Life: ix.life}
}

// decideModes sets walkWhy and indexedPos, logging why each namespace not indexed is walked,
// and returns the namespaces to index.
func (ix *indexer) decideModes() []Namespace {
	ix.walkWhy = map[int]string{}
	// A client of another kind (a Ring, a caller's own UniversalClient) has no node to follow.
	var indexable bool
	switch ix.client.(type) {
	case *redis.ClusterClient, *redis.Client:
		indexable = true
	}
	var indexed []Namespace
	for i, ns := range ix.opts.Namespaces {
		why := ""
		switch {
		case ix.opts.Mode == ModeWalk:
			why = reasonWalkConfigured
		case !indexable:
			why = reasonIndexUnavailable
		case walk.LiteralPrefix(ns.Pattern) == "":
			why = reasonNoLiteralPrefix
		case len(indexed) == index.MaxNamespaces:
			why = reasonTooManyIndexed
		}
		if why != "" {
			ix.walkWhy[i] = why
			if why != reasonWalkConfigured {
				ix.opts.Logger.Info(fmt.Sprintf("namespace %s: %s: walking the keyspace on every scrape", ns.Name, reasonText[why]), "lock_namespace", ns.Name)
			}
			continue
		}
		ix.indexedPos = append(ix.indexedPos, i)
		indexed = append(indexed, ns)
	}
	return indexed
}

// lockIndex is the index a Scanner serves indexed namespaces from: one node's, or a cluster's.
type lockIndex interface {
	Collect(ctx context.Context) index.Serve
	Counts() index.Counts
	// Readmit brings namespace b, back under the key budget, into the index.
	Readmit(b int)
	Close()
}

// lockIndex is the index the indexer serves from.
func (ix *indexer) lockIndex() lockIndex {
	if ix.cluster != nil {
		return ix.cluster
	}
	return ix.node
}

// close stops the index and the walker beside it; the Scanner has ended base.
func (ix *indexer) close() {
	ix.lockIndex().Close()
	ix.walkerMu.Lock()
	if ix.walker != nil {
		ix.walker.Close()
	}
	ix.walkerMu.Unlock()
}

// scan serves the indexed namespaces from the index and walks the others (and any the index
// cannot serve this time) with a walker over just those.
func (ix *indexer) scan(ctx context.Context) *Result {
	if ix.base.Err() != nil { // the Scanner is closed
		return closedResult(ix.opts)
	}
	idx := ix.lockIndex()
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, ix.opts.Timeout)
	defer cancel()
	served := idx.Collect(ctx)
	if served.Partial {
		return ix.partialBuild(served)
	}
	walkPos := map[int]string{}
	maps.Copy(walkPos, ix.walkWhy)
	for m := served.Walk; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		walkPos[ix.indexedPos[b]] = served.WalkWhy[b]
	}
	var walked *Result
	if len(walkPos) > 0 {
		walked = walkedCopy(ix.walkerFor(served.Walk).Scan(ctx), ix.opts.Namespaces, nil)
	}
	// A cluster namespace that some masters served from their index and others by a walk of
	// just those masters reports the walk: this scrape cost Redis a walk of them.
	for b, why := range served.Walked {
		walkPos[ix.indexedPos[b]] = why
	}

	res := ix.mergeServed(served, walked, idx.Counts(), walkPos)
	res.lifecycle = ix.lifecycleReport(res)
	// One scrape, one line: the walker beside the index logs nothing of its own (no Report).
	ix.logMerged(res, began)
	ix.readmitShrunk(idx, res)
	return res
}

// mergeServed is an indexed scrape's result: the namespaces the index served (served), and those
// walked (walked, nil when none was) at their positions in walkPos, with the reason they were.
func (ix *indexer) mergeServed(served index.Serve, walked *Result, counts index.Counts, walkPos map[int]string) *Result {
	res := servedHeader(served)
	res.IndexResyncs, res.IndexEntries = counts.Resyncs, counts.Entries
	res.IndexCorrections, res.IndexBackstops = counts.Corrections, counts.Backstops
	byName := map[string]NamespaceResult{}
	if walked != nil {
		if res.Up && !walked.Up {
			res.Up, res.Err = false, walked.Err
		}
		res.IdleTimeAvailable = res.IdleTimeAvailable && walked.IdleTimeAvailable
		res.ScanCalls += walked.ScanCalls
		res.KeysScanned += walked.KeysScanned
		res.Keyspace = walked.Keyspace
		for _, ns := range walked.Namespaces {
			byName[ns.Namespace.Name] = ns
		}
	}
	for _, r := range ix.publicServed(served) {
		byName[r.Namespace.Name] = r
	}
	for i, ns := range ix.opts.Namespaces {
		r, ok := byName[ns.Name]
		if !ok {
			r = NamespaceResult{Namespace: ns} // Redis did not answer: nothing is known
		}
		if why, walkedNS := walkPos[i]; walkedNS {
			r.Mode, r.ModeReason = modeWalk, why
		} else {
			r.Mode = modeIndex
		}
		res.Namespaces = append(res.Namespaces, r)
	}
	return res
}

// logMerged logs an indexed scrape's result as logResult does, once for the scrapes that ran
// together: a line already logged by a scrape that ended after this one began is not repeated,
// as concurrent scrapes of a walk share one walk and its one line. (Each indexed scrape is
// served on its own, so a burst of scrapes of a Redis that does not answer logged a line each.)
func (ix *indexer) logMerged(res *Result, began time.Time) {
	ix.logMu.Lock()
	defer ix.logMu.Unlock()
	now := time.Now()
	if ix.logged == nil {
		ix.logged = map[string]time.Time{}
	}
	for line, at := range ix.logged {
		if now.Sub(at) > 2*ix.opts.Timeout { // no scrape in flight began before it
			delete(ix.logged, line)
		}
	}
	logResult(ix.opts.Logger, res, func(line string) bool {
		if at, ok := ix.logged[line]; ok && !at.Before(began) {
			return true
		}
		ix.logged[line] = now
		return false
	})
}

// walkerFor returns a walker over the namespaces not indexed at start plus the indexed ones in
// mask, made anew when that set changes (rarely: a refusal, the key budget, or the first build
// finishing).
func (ix *indexer) walkerFor(mask uint64) *walk.Walker {
	ix.walkerMu.Lock()
	defer ix.walkerMu.Unlock()
	if ix.walker != nil && ix.walkerSet == mask {
		return ix.walker
	}
	if ix.walker != nil {
		ix.walker.Close()
	}
	opts := ix.opts
	opts.Mode, opts.Namespaces = ModeWalk, nil
	inMask := map[int]bool{}
	for b, pos := range ix.indexedPos {
		inMask[pos] = mask&(1<<b) != 0
	}
	for i, ns := range ix.opts.Namespaces {
		if _, indexed := inMask[i]; !indexed || inMask[i] {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	// No report: scanIndexed logs the merged result.
	w := walk.NewWalker(context.Background(), ix.client, walkOptionsOf(opts, nil))
	ix.walker, ix.walkerSet = w, mask
	return w
}

// servedHeader is the Result of what an index served, without its namespaces.
func servedHeader(served index.Serve) *Result {
	return &Result{
		Up: served.Err == nil, Err: publicErr(served.Err), IdleTimeAvailable: !served.NoIdle,
		Keyspace: served.Keyspace, ScanCalls: served.ScanCalls, KeysScanned: served.KeysScanned,
	}
}

// publicServed converts the namespaces an index served into the API's, by bit: the one place
// besides publicResult where what the index saw becomes a Result's.
func (ix *indexer) publicServed(served index.Serve) map[int]NamespaceResult {
	out := make(map[int]NamespaceResult, len(served.Results))
	for b, r := range served.Results {
		pub := publicNamespaceResult(r.NamespaceResult, ix.opts.Namespaces[ix.indexedPos[b]])
		pub.Indexed, pub.IndexAge, pub.lifecycleGap = r.Indexed, r.IndexAge, r.LifecycleGap
		pub.Mode = modeIndex
		out[b] = pub
	}
	return out
}

// partialBuild is a scrape's answer from the first build's walk, cut at the scrape's deadline:
// the indexed namespaces as a cut walk reports them (Complete false), the others not read this
// time (Redis was reached, so the walk of those is the next scrape's).
func (ix *indexer) partialBuild(served index.Serve) *Result {
	res := servedHeader(served)
	byName := map[string]NamespaceResult{}
	for _, ns := range ix.publicServed(served) {
		ns.Complete = false
		byName[ns.Namespace.Name] = ns
	}
	for i, ns := range ix.opts.Namespaces {
		r, ok := byName[ns.Name]
		if !ok {
			// Walked namespaces had no time left: unknown, not zero.
			r = NamespaceResult{Namespace: ns, Err: index.ErrBuildTookTheDeadline}
		}
		r.Mode, r.ModeReason = modeIndex, ""
		if why, walked := ix.walkWhy[i]; walked {
			r.Mode, r.ModeReason = modeWalk, why
		} else {
			r.Indexed = true
		}
		res.Namespaces = append(res.Namespaces, r)
	}
	return res
}

// readmitShrunk brings back to the index every namespace this scrape walked for the key budget
// whose walk read it whole, if it fits (index.KeyBudget.Readmit). The walk of a namespace is cut at
// Options.MaxKeys: below the budget by default, so a namespace comes back only once it holds
// fewer keys than that, whatever half the budget is.
func (ix *indexer) readmitShrunk(idx lockIndex, res *Result) {
	if !res.Up {
		return
	}
	for b, pos := range ix.indexedPos {
		r := res.Namespaces[pos]
		if r.Mode != modeWalk || r.ModeReason != reasonKeyBudget || !r.Complete || r.Truncated || r.Err != nil {
			continue
		}
		if ix.budget.Readmit(b, r.Keys+r.FenceKeys) {
			idx.Readmit(b)
		}
	}
}
