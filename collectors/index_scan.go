package collectors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"time"

	"github.com/redis/go-redis/v9"
)

// The mode label values of lock_exporter_scan_mode.
const (
	modeIndex = "index"
	modeWalk  = "walk"
)

// startIndex decides, at NewScanner, which namespaces the index can serve, logs one line for
// each that it cannot, and starts the index: the node's, or on Redis Cluster one per master. A
// namespace is walked when --scan.mode=walk, when its pattern has no literal prefix (tracking
// would be told about every key), and beyond the 64th indexed namespace.
func (s *Scanner) startIndex() {
	s.walkWhy = map[int]string{}
	// A client of another kind (a Ring, a caller's own UniversalClient) has no node to follow.
	var indexable bool
	switch s.client.(type) {
	case *redis.ClusterClient, *redis.Client:
		indexable = true
	}
	var patterns []string
	var indexed []Namespace
	for i, ns := range s.opts.Namespaces {
		why := ""
		switch {
		case s.opts.Mode == ModeWalk:
			why = reasonWalkConfigured
		case !indexable:
			why = reasonIndexUnavailable
		case literalPrefix(ns.Pattern) == "":
			why = reasonNoLiteralPrefix
		case len(indexed) == maxIndexedNamespaces:
			why = reasonTooManyIndexed
		}
		if why != "" {
			s.walkWhy[i] = why
			if why != reasonWalkConfigured {
				s.opts.Logger.Info(fmt.Sprintf("namespace %s: %s: walking the keyspace on every scrape", ns.Name, reasonText[why]), "lock_namespace", ns.Name)
			}
			continue
		}
		s.indexedPos = append(s.indexedPos, i)
		indexed = append(indexed, ns)
		patterns = append(patterns, ns.Pattern)
	}
	if len(indexed) == 0 {
		return
	}
	prefixes, _ := trackingPrefixes(patterns) // every pattern here has a literal prefix
	s.budget = newKeyBudget(s.opts.IndexKeyBudget, indexed, s.opts.Logger)
	s.life = newLifecycleTracker(indexed, s.opts)
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		s.cluster = newClusterIndex(s, c, indexed, prefixes)
	case *redis.Client:
		s.index = newIndexNode(s.indexEnv(), c, indexed, prefixes)
	}
}

// lockIndex is the index the Scanner serves from, or nil when every namespace is walked.
func (s *Scanner) lockIndex() lockIndex {
	switch {
	case s.cluster != nil:
		return s.cluster
	case s.index != nil:
		return s.index
	}
	return nil
}

// scanIndexed serves the indexed namespaces from the index and walks the others (and any the
// index cannot serve this time) with a walker over just those.
func (s *Scanner) scanIndexed(ctx context.Context, idx lockIndex) *Result {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return closedResult(s.opts)
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	served := idx.collect(ctx)
	if served.partial != nil {
		return s.partialBuild(served.partial)
	}
	walkPos := map[int]string{}
	maps.Copy(walkPos, s.walkWhy)
	for m := served.walk; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		walkPos[s.indexedPos[b]] = served.walkWhy[b]
	}
	var walked *Result
	if len(walkPos) > 0 {
		walked = walkedCopy(s.walkerFor(served.walk).scan(ctx), nil)
	}
	// A cluster namespace that some masters served from their index and others by a walk of
	// just those masters reports the walk: this scrape cost Redis a walk of them.
	for b, why := range served.walked {
		walkPos[s.indexedPos[b]] = why
	}

	res := s.mergeServed(served, walked, idx.counts(), walkPos)
	res.lifecycle = s.lifecycleReport(res)
	// One scrape, one line: the walker beside the index logs nothing of its own (quiet).
	s.logMerged(res, began)
	s.readmitShrunk(idx, res)
	return res
}

// mergeServed is an indexed scrape's result: the namespaces the index served (served), and those
// walked (walked, nil when none was) at their positions in walkPos, with the reason they were.
func (s *Scanner) mergeServed(served indexServe, walked *Result, counts indexCounts, walkPos map[int]string) *Result {
	res := &Result{Up: served.err == nil, Err: served.err, IdleTimeAvailable: !served.noIdle, Keyspace: served.keyspace}
	res.IndexResyncs, res.IndexEntries = counts.resyncs, counts.entries
	res.IndexCorrections, res.IndexBackstops = counts.corrections, counts.backstops
	res.ScanCalls, res.KeysScanned = served.scanCalls, served.keysScanned
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
	for b, pos := range s.indexedPos {
		if r, ok := served.results[b]; ok {
			r.Mode = modeIndex
			byName[s.opts.Namespaces[pos].Name] = r
		}
	}
	for i, ns := range s.opts.Namespaces {
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
// as concurrent scrapes of a walk share one pass and its one line. (Each indexed scrape is
// served on its own, so a burst of scrapes of a Redis that does not answer logged a line each.)
func (s *Scanner) logMerged(res *Result, began time.Time) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	now := time.Now()
	if s.logged == nil {
		s.logged = map[string]time.Time{}
	}
	for line, at := range s.logged {
		if now.Sub(at) > 2*s.opts.Timeout { // no scrape in flight began before it
			delete(s.logged, line)
		}
	}
	logResult(s.opts.Logger, res, func(line string) bool {
		if at, ok := s.logged[line]; ok && !at.Before(began) {
			return true
		}
		s.logged[line] = now
		return false
	})
}

// walkerFor returns a walker over the namespaces not indexed at start plus the indexed ones in
// mask, made anew when that set changes (rarely: a refusal, the key budget, or the first build
// finishing).
func (s *Scanner) walkerFor(mask uint64) *walker {
	s.walkerMu.Lock()
	defer s.walkerMu.Unlock()
	if s.walker != nil && s.walkerSet == mask {
		return s.walker
	}
	if s.walker != nil {
		s.walker.close()
	}
	opts := s.opts
	opts.Mode, opts.Namespaces = ModeWalk, nil
	inMask := map[int]bool{}
	for b, pos := range s.indexedPos {
		inMask[pos] = mask&(1<<b) != 0
	}
	for i, ns := range s.opts.Namespaces {
		if _, indexed := inMask[i]; !indexed || inMask[i] {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	w := newWalker(context.Background(), s.client, opts)
	w.quiet = true // scanIndexed logs the merged result
	s.walker, s.walkerSet = w, mask
	return w
}

// errBuildTookTheDeadline is the error of a walked namespace in a scrape that the index's first
// build held until its deadline.
var errBuildTookTheDeadline = errors.New("not read: the scrape's deadline passed during the lock-key index's first build")

// partialBuild is a scrape's answer from the first build's walk, cut at the scrape's deadline:
// the indexed namespaces as a cut walk reports them (Complete false), the others not read this
// time (Redis was reached, so the walk of those is the next scrape's).
func (s *Scanner) partialBuild(p *Result) *Result {
	res := *p
	res.Namespaces = nil
	byName := map[string]NamespaceResult{}
	for _, ns := range p.Namespaces {
		ns.Complete = false
		byName[ns.Namespace.Name] = ns
	}
	for i, ns := range s.opts.Namespaces {
		r, ok := byName[ns.Name]
		if !ok {
			// Walked namespaces had no time left: unknown, not zero.
			r = NamespaceResult{Namespace: ns, Err: errBuildTookTheDeadline}
		}
		r.Mode, r.ModeReason = modeIndex, ""
		if why, walked := s.walkWhy[i]; walked {
			r.Mode, r.ModeReason = modeWalk, why
		} else {
			r.Indexed = true
		}
		res.Namespaces = append(res.Namespaces, r)
	}
	return &res
}
