package index

import (
	"context"
	"errors"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/redis/go-redis/v9"
)

// awaitFirstBuild waits, before the first index exists, for the first build attempt to end
// (a small keyspace takes milliseconds) or for ctx. If the attempt is still walking at ctx's end,
// it returns the walk's snapshot (ok true): the scrape shares that walk rather than start a second.
// Otherwise the caller goes on (and walks, if no index was built).
func (n *Node) awaitFirstBuild(ctx context.Context) (*walk.Result, bool) {
	if n.late {
		return nil, false
	}
	select {
	case <-n.tried:
		return nil, false
	default:
	}
	deadline := time.Now().Add(n.Opts.Walk.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-n.tried:
		return nil, false
	case <-ctx.Done():
	case <-wait.C:
	}
	n.mu.Lock()
	f := n.building
	n.mu.Unlock()
	if f == nil {
		return nil, false
	}
	return f.Snapshot(time.Now()), true
}

// Collect serves a scrape from the index: it drains the feed (a TIME round trip on the tracking
// connection and the re-reads of every key it named), checks the server's identity, aggregates
// the index as of the server's TIME, and re-reads OBJECT IDLETIME of the top-K candidates and
// their holder keys. While a resync runs it serves the last complete index, with its age.
func (n *Node) Collect(ctx context.Context) Serve {
	out := Serve{WalkWhy: map[int]string{}, Results: map[int]ServedNamespace{}}
	start := time.Now()
	if building, ok := n.awaitFirstBuild(ctx); ok {
		return BuildingServe(building)
	}
	if !n.syncMu.lockCtx(ctx) {
		out.Err = walk.ErrNoAnswer // the feed loop waits for a Redis that does not answer
		return out
	}
	handed := false
	defer func() {
		if !handed {
			n.syncMu.Unlock()
		}
	}()
	out, handed = n.serveLocked(ctx, out, start)
	return out
}

// serveLocked is Collect once syncMu is held: it decides what the index can serve, brings it up
// to the scrape, and serves it. handed is true when syncMu was handed to a round trip still
// under way (scrapePing): the caller must not release it.
func (n *Node) serveLocked(ctx context.Context, out Serve, start time.Time) (served Serve, handed bool) {
	// maxmemory-policy is a runtime setting: each scrape asks OBJECT IDLETIME again, as each
	// walk does, so that idle times come back once an LFU policy is switched off. Under LFU
	// the cost is one refused command, after which the node remembers it for this scrape.
	n.noIdle.Store(false)
	n.mu.Lock()
	refused, current, usable := n.refused, n.current, n.built && !n.failing
	n.mu.Unlock()
	switch {
	case refused != nil:
		return out.WalkAll(len(n.namespaces), WhyTrackingRefused), false
	case n.idx == nil || !usable:
		// No build has succeeded yet, or the last one failed: the index held may never have
		// been current, or be behind by the retry's backoff.
		return out.WalkAll(len(n.namespaces), WhyIndexUnavailable), false
	}
	overBudget := n.budgetWalked()
	for b := range n.namespaces {
		if overBudget&(1<<b) != 0 {
			out.Walk |= 1 << b
			out.WalkWhy[b] = WhyKeyBudget
		}
	}
	if current {
		drainHanded, err := n.scrapeDrain(ctx)
		switch {
		case drainHanded:
			out.Err = walk.ErrNoAnswer
			return out, true // the round trip releases syncMu when its reply arrives
		case isRefusal(err):
			n.refuseIndex(err)
			return out.WalkAll(len(n.namespaces), WhyTrackingRefused), false
		case err != nil:
			out.Err = err
			return out, false
		}
	}
	return n.serveChecked(ctx, out, start), false
}

// serveChecked reads the server's identity and TIME, and serves the index as of that TIME if it
// still holds this server's data; otherwise the scrape walks. syncMu is held.
func (n *Node) serveChecked(ctx context.Context, out Serve, start time.Time) Serve {
	ident, keyspace, now, err := n.readIdentity(ctx, true)
	if refused := RefusedGrant(err); refused != err {
		// A grant the index needs was revoked since its build.
		n.refuseIndex(refused)
		return out.WalkAll(len(n.namespaces), WhyTrackingRefused)
	}
	if err != nil {
		out.Err = err
		return out
	}
	out.Keyspace = keyspace
	if n.dataInDoubt(ident) {
		return out.WalkAll(len(n.namespaces), WhyResyncing)
	}
	return n.serveIndex(ctx, out, start, now)
}

// dataInDoubt checks the server's identity, just read, against the index's (a change marks the
// index behind), and reports whether the index may hold another dataset than the server's, or
// serve keys the node no longer serves: then the scrape walks. syncMu is held.
func (n *Node) dataInDoubt(ident ServerIdentity) bool {
	changed := n.checkIdentity(ident)
	n.settleLifecycle(changed)
	if changed != "" {
		n.lose(changed)
	}
	// During a resync the last complete index is served only if it is still this server's
	// data, merely no longer followed (a dropped feed). After a restart, a failover, SWAPDB or a
	// flush, or a stats reset that may hide one, it may be wrong: this scrape walks instead.
	n.mu.Lock()
	stale, why := !n.current, n.lost
	n.mu.Unlock()
	// A cluster node that is no longer a master (failed over) serves nothing: its new master
	// holds its keys, and the cluster's index starts a node for it.
	demoted := n.clusterMaster && ident.Role != "master"
	return demoted || stale && (changed != "" || dataReplaced(why))
}

// serveIndex fills out's results from the index as of now (server ms): every namespace out does
// not walk, with exact top-K lists, hold ages, and the holders of the locks listed. syncMu is
// held.
func (n *Node) serveIndex(ctx context.Context, out Serve, start time.Time, now int64) Serve {
	n.mu.Lock()
	age := time.Duration(0)
	if !n.current {
		age = time.Since(n.currentAt)
	}
	n.mu.Unlock()
	keyErrs := n.unreadableErrs()
	n.sweepLifecycle(now)
	n.forgetDeparted(now)
	lifeGap := n.takeLifecycleGap()

	aggs, idle, err := n.exactTop(ctx, now)
	if err != nil {
		out.Err = err
		return out
	}
	out.NoIdle = !idle
	k := n.Opts.Walk.TopK
	held := n.idx.HeldAges(n.namespaces, now, k, n.Opts.Walk.FullKeys, !n.Opts.RecordHoldAgesOnly)
	var holderKeys []string
	for b := range n.namespaces {
		if out.Walk&(1<<b) != 0 {
			continue
		}
		r := IndexedResult(aggs[b], k, idle)
		r.Err, r.Duration, r.IndexAge = keyErrs[b], time.Since(start), age
		r.LifecycleGap = lifeGap
		if held != nil {
			WithHeld(&r, held[b])
		}
		holderKeys = AppendHolderKeys(holderKeys, r)
		out.Results[b] = r
	}
	n.addHolders(ctx, out.Results, holderKeys)
	return out
}

// addHolders reads the values of holderKeys and sets them as the holders of the keys listed in
// results; a holder key that cannot be read leaves its locks listed without a holder.
func (n *Node) addHolders(ctx context.Context, results map[int]ServedNamespace, holderKeys []string) {
	if len(holderKeys) == 0 {
		return
	}
	found, herr := walk.ReadHolderValues(ctx, n.client, holderKeys)
	if herr != nil {
		n.Opts.Logger.Debug("holder keys unreadable; locks are listed without holders", "err", herr)
	}
	for b, r := range results {
		for _, list := range [][]walk.KeyInfo{r.Stalest, r.StalestNoTTL} {
			for i := range list {
				if !list[i].Cut {
					list[i].Holder = found[list[i].Key]
				}
			}
		}
		results[b] = r
	}
}

// scrapeDrain brings the index up to the scrape: the feed drained (its round trip with scrapePing,
// which may hand syncMu over: handed true), and the keys whose re-read was refused read again.
// A lost feed marks the index behind (lose). syncMu is held.
func (n *Node) scrapeDrain(ctx context.Context) (handed bool, err error) {
	reason := ResyncConnectionLost
	if n.feed != nil {
		handed, pingErr := n.scrapePing(ctx)
		if handed {
			return true, walk.ErrNoAnswer
		}
		if reason, err = n.drainPinged(ctx, pingErr); err != nil {
			return false, err
		}
	}
	if reason != "" {
		n.lose(reason)
		return false, nil
	}
	return false, n.retryUnreadable(ctx)
}

// dataReplaced reports whether a resync for reason means the index may hold another dataset's
// keys, not merely miss recent changes: it must not be served while the resync runs.
func dataReplaced(reason string) bool {
	switch reason {
	case ResyncFlush, ResyncSwapDB, ResyncStatsReset, ResyncRestart, ResyncRole, ResyncSlotsMoved:
		return true
	}
	return false
}

// scrapePing runs a scrape's round trip (ChangeFeed.Ping) on the tracking connection with the
// scrape's deadline plus commandGrace on the socket, not the deadline itself: a read timeout
// closes the connection and with it tracking, so a scrape that ends while the reply is on its
// way (a short X-Prometheus-Scrape-Timeout-Seconds, a client that hangs up) would make the node
// resync, a new feed and a walk of the whole keyspace. The scrape stops waiting at its deadline;
// the round trip then finishes by itself and releases syncMu (handed true: the caller must
// not). syncMu is held.
func (n *Node) scrapePing(ctx context.Context) (handed bool, err error) {
	d, ok := ctx.Deadline()
	if !ok {
		return false, n.feed.Ping(ctx)
	}
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.Add(walk.CommandGrace))
	feed, done := n.feed, make(chan error, 1)
	go func() {
		done <- feed.Ping(pctx)
		cancel()
	}()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		go func() {
			<-done
			n.syncMu.Unlock()
		}()
		return true, ctx.Err()
	}
}

// exactTop aggregates the index and makes the top-K lists exact: an index entry's idle time is
// an upper bound (a read touches a key without a change-feed message), so the m stalest keys by
// estimate are re-read with OBJECT IDLETIME, and m grows until the K-th stalest re-read key is
// at least as idle as the least stale candidate's estimate, in OBJECT IDLETIME's whole seconds
// (every key not re-read is at most that idle, to that resolution). The returned aggregates' top lists hold the re-read keys with their true idle time,
// stalest first, cut to the walk's label rules. idle is false when the server does not track idle
// time (an LFU maxmemory-policy).
func (n *Node) exactTop(ctx context.Context, now int64) ([]NamespaceAggregate, bool, error) {
	k := n.Opts.Walk.TopK
	m := max(4*k, k+16)
	for {
		aggs := n.idx.Aggregate(n.namespaces, now, m)
		var keys []string
		seen := map[string]bool{}
		for _, a := range aggs {
			for _, t := range []*walk.TopK{a.Top, a.NoTTLTop} {
				for _, ki := range t.Items() {
					if !seen[ki.Key] {
						seen[ki.Key] = true
						keys = append(keys, ki.Key)
					}
				}
			}
		}
		real, idle, err := n.readIdle(ctx, keys, now)
		if err != nil {
			return nil, false, err
		}
		exact := true
		for i := range aggs {
			a := &aggs[i]
			for _, t := range []**walk.TopK{&a.Top, &a.NoTTLTop} {
				cands := *t
				final := walk.NewTopK(k, n.Opts.Walk.FullKeys)
				for _, ki := range cands.Items() {
					if v, ok := real[ki.Key]; ok {
						ki.Idle = v
						final.Offer(ki)
					}
				}
				if idle && len(cands.Items()) == m {
					// OBJECT IDLETIME is whole seconds, floored: a key not re-read is at most
					// a second staler than the least stale candidate's estimate, so comparing
					// whole seconds keeps the lists exact to that resolution, and ties (every
					// key idle for the same second) end the search instead of re-reading all.
					got := final.Sorted()
					if len(got) < k || got[len(got)-1].Idle < cands.Items()[0].Idle.Truncate(time.Second) {
						exact = false
					}
				}
				*t = final
			}
		}
		if exact || !idle || m >= n.idx.Len() {
			return aggs, idle, nil
		}
		m *= 4
	}
}

// readIdle re-reads OBJECT IDLETIME of keys in one pipeline, records what it read in the index,
// and returns the idle times by key; a key gone since the drain is left out. idle is false under
// an LFU policy (then every listed key maps to 0, as the walk lists them).
func (n *Node) readIdle(ctx context.Context, keys []string, now int64) (map[string]time.Duration, bool, error) {
	out := make(map[string]time.Duration, len(keys))
	if len(keys) == 0 {
		return out, !n.noIdle.Load(), nil
	}
	if n.noIdle.Load() {
		for _, k := range keys {
			out[k] = 0
		}
		return out, false, nil
	}
	pipe := n.client.Pipeline()
	cmds := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.ObjectIdleTime(ctx, k)
	}
	_, _ = pipe.Exec(ctx)
	for i, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case walk.LFURefused(err):
			n.noIdle.Store(true)
			return n.readIdle(ctx, keys, now)
		case walk.IsConnectionError(err):
			return nil, false, err
		case err != nil:
			continue // the key's namespaces report the error from its re-read
		}
		out[keys[i]] = v
		if e, ok := n.idx.Get(keys[i]); ok {
			e.Touched = now - v.Milliseconds()
			n.idx.Set(keys[i], e)
		}
	}
	return out, true, nil
}
