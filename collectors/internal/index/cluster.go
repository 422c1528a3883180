package index

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// topologyEvery is how often the cluster's masters are listed outside scrapes (a scrape always
// lists them), so that a failover starts the new master's index before the next scrape needs it.
const topologyEvery = time.Second

// errNoMasters is a scrape's error when the cluster's slot map names no master.
var errNoMasters = errors.New("the cluster's slot map names no master")

// Cluster keeps one index per master of a Redis Cluster, each with its own change feed on
// a connection to that master: tracking is per node, and a key's invalidation comes from the
// master that holds it. Slot moves are each master's to notice (a re-read redirected by MOVED
// or ASK means a slot is migrating, and the slots it serves are part of its identity): it
// resyncs. Which nodes are masters is read from the cluster's slot map at every scrape and every
// topologyEvery: a master that appears (a failover, a new shard) gets an index, and one that
// disappears has its index stopped. A scrape merges the masters' figures as the walk merges the
// nodes it walks; a master that cannot serve a namespace from its index this time (a resync
// that cannot be expected to end before the scrape's deadline, a refusal, the key budget) is
// walked alone for it, so a resharding costs Redis the resyncs of the masters whose slots move,
// not a walk of the whole cluster.
type Cluster struct {
	env        Env // what each master's node is given
	cc         *redis.ClusterClient
	namespaces []walk.Namespace // the indexed namespaces (Options.Namespaces), by bit
	prefixes   []string

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	loaded chan struct{} // closed when the first listing of the masters ended

	// refreshMu makes one listing of the masters at a time; a scrape stops waiting for it at
	// its deadline (a listing that waits for a master that stopped answering takes longer).
	refreshMu syncLock
	// retiring runs the closes of the indexes of masters gone: a close waits for the node's
	// feed loop, which a master that stopped answering holds up to feedCommandTimeout, longer
	// than a scrape that lists the masters should wait.
	retiring sync.WaitGroup

	walkers MasterWalkers // walk the masters that cannot serve a scrape from their index

	mu       sync.Mutex
	nodes    map[string]*Node // by address; nil before the first listing
	retired  Counts           // the counts of masters whose index was stopped
	topology int64            // listings that found the masters changed
	closed   bool
}

func NewCluster(env Env, cc *redis.ClusterClient, prefixes []string) *Cluster {
	ci := &Cluster{
		env: env, cc: cc, namespaces: env.Opts.Namespaces, prefixes: prefixes,
		done: make(chan struct{}), loaded: make(chan struct{}), refreshMu: make(syncLock, 1),
	}
	ci.ctx, ci.cancel = context.WithCancel(env.Base)
	go ci.run()
	return ci
}

func (ci *Cluster) run() {
	defer close(ci.done)
	_ = ci.refresh(ci.ctx) // a failure is the scrape's to report, when it lists them again
	close(ci.loaded)
	t := time.NewTicker(topologyEvery)
	defer t.Stop()
	for {
		select {
		case <-ci.ctx.Done():
			return
		case <-t.C:
		}
		_ = ci.refresh(ci.ctx)
	}
}

// refresh lists the masters from the cluster's slot map (go-redis reloads it for
// forEachMaster) and starts or stops the masters' indexes to match.
func (ci *Cluster) refresh(ctx context.Context) error {
	if !ci.refreshMu.lockCtx(ctx) {
		return walk.ErrNoAnswer
	}
	defer ci.refreshMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, feedCommandTimeout)
	defer cancel()
	rctx, rcancel := walk.ReloadContext(ctx)
	defer rcancel()
	return ci.list(rctx)
}

// refreshForScrape is a scrape's refresh: the listing, and the wait for a listing under way
// (the background one, whose reload may wait its own share for a hung node), take together no
// more than the slot map's reload share of the scrape's time left; past that, the masters
// listed last serve, as forEachMaster serves go-redis's last slot map. Waiting for the whole
// listing under way stacked its share on the scrape's.
func (ci *Cluster) refreshForScrape(ctx context.Context) error {
	rctx, cancel := walk.ReloadContext(ctx)
	defer cancel()
	if !ci.refreshMu.lockCtx(rctx) {
		ci.mu.Lock()
		listed := ci.nodes != nil
		ci.mu.Unlock()
		if ctx.Err() != nil || !listed {
			return walk.ErrNoAnswer
		}
		return nil
	}
	defer ci.refreshMu.Unlock()
	return ci.list(rctx)
}

// list reads the masters from the slot map, go-redis's reload bounded by rctx, and starts or
// stops the masters' indexes to match. refreshMu is held.
func (ci *Cluster) list(rctx context.Context) error {
	var listMu sync.Mutex
	masters := map[string]*redis.Client{}
	err := walk.ForEachMasterWithin(rctx, ci.cc, func(c *redis.Client) {
		listMu.Lock()
		defer listMu.Unlock()
		masters[c.Options().Addr] = c
	})
	if err != nil {
		return err
	}
	if len(masters) == 0 {
		return errNoMasters
	}

	ci.mu.Lock()
	if ci.closed {
		ci.mu.Unlock()
		return nil
	}
	first := ci.nodes == nil
	if first {
		ci.nodes = map[string]*Node{}
	}
	var gone []*Node
	for addr, n := range ci.nodes {
		if masters[addr] == nil {
			gone = append(gone, n)
			delete(ci.nodes, addr)
			// Its counts move to retired now, so the counters a scrape sums never go back.
			counts := n.Counts()
			counts.Entries = 0
			ci.retired.Add(counts)
		}
	}
	added := 0
	for addr, c := range masters {
		if ci.nodes[addr] == nil {
			n := makeIndexNode(ci.env, c, ci.prefixes)
			n.clusterMaster, n.late = true, !first
			ci.nodes[addr] = n
			go n.run()
			added++
		}
	}
	if !first && (added > 0 || len(gone) > 0) {
		ci.topology++
	}
	ci.mu.Unlock()

	for _, n := range gone {
		ci.walkers.Forget(n.client.Options().Addr)
		ci.retiring.Go(n.Close)
	}
	if !first && (added > 0 || len(gone) > 0) {
		ci.env.Opts.Logger.Info("lock key index: the cluster's masters changed", "reason", ResyncTopology,
			"masters", slices.Sorted(maps.Keys(masters)), "started", added, "stopped", len(gone))
	}
	return nil
}

func (ci *Cluster) Counts() Counts {
	ci.mu.Lock()
	nodes := slices.Collect(maps.Values(ci.nodes))
	out := Counts{Resyncs: map[string]int64{}}
	out.Add(ci.retired)
	out.Resyncs[ResyncTopology] += ci.topology
	ci.mu.Unlock()
	for _, n := range nodes {
		out.Add(n.Counts())
	}
	return out
}

// Readmit brings namespace b back into every master's index: each rebuilds with it.
func (ci *Cluster) Readmit(b int) {
	ci.mu.Lock()
	nodes := slices.Collect(maps.Values(ci.nodes))
	ci.mu.Unlock()
	for _, n := range nodes {
		n.Readmit(b)
	}
}

func (ci *Cluster) Close() {
	ci.cancel()
	<-ci.done
	ci.refreshMu.Lock() // a scrape's listing may be starting nodes
	ci.mu.Lock()
	ci.closed = true
	nodes := slices.Collect(maps.Values(ci.nodes))
	ci.mu.Unlock()
	ci.refreshMu.Unlock()
	for _, n := range nodes {
		n.Close()
	}
	ci.walkers.Close()
	ci.retiring.Wait()
}

// Collect lists the masters, has each master's index serve the scrape (concurrently), and
// merges what they served.
func (ci *Cluster) Collect(ctx context.Context) Serve {
	out := Serve{WalkWhy: map[int]string{}, Results: map[int]ServedNamespace{}}
	select {
	case <-ci.loaded:
	case <-ctx.Done():
		out.Err = walk.ErrNoAnswer
		return out
	}
	if err := ci.refreshForScrape(ctx); err != nil {
		out.Err = err
		return out
	}
	ci.mu.Lock()
	nodes := slices.SortedFunc(maps.Values(ci.nodes), func(a, b *Node) int {
		return strings.Compare(a.client.Options().Addr, b.client.Options().Addr)
	})
	ci.mu.Unlock()
	parts := make([]Serve, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { parts[i] = n.Collect(ctx) })
	}
	wg.Wait()
	for _, p := range parts {
		if p.Partial {
			return MergePartialServes(ci.namespaces, ci.env.Opts.Walk.TopK, parts)
		}
	}
	ci.awaitResyncs(ctx, nodes, parts)
	return MergeServes(ci.namespaces, ci.env.Opts.Walk.TopK, parts, ci.walkResyncing(ctx, nodes, parts))
}
