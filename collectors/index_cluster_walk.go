package collectors

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// masterWalkers walks, for a cluster's scrape, only the masters whose index cannot serve some
// namespace this time (a resync after a slot move or a failover, a refusal, the key budget):
// a resharding resyncs the two masters of each moved slot, and walking every master for that
// would make the exporter cost what the walk costs for as long as the resharding runs. Each
// walker is a walk-mode Scanner over one master's client and the namespaces that master must
// walk, kept while that set stays the same (so concurrent scrapes share its pass).
type masterWalkers struct {
	mu      sync.Mutex
	walkers map[string]*masterWalker // by master address
	closed  bool
}

type masterWalker struct {
	mask uint64
	s    *Scanner
}

// walkOf is the walk of one master: which indexed namespaces (bits) it read, and what it saw.
type walkOf struct {
	mask uint64
	res  *Result
}

// scan walks master c for the indexed namespaces in mask (bits of namespaces).
func (mw *masterWalkers) scan(ctx context.Context, parent *Scanner, c *redis.Client, namespaces []Namespace, mask uint64) *Result {
	w := mw.walker(parent, c, namespaces, mask)
	if w == nil {
		return closedResult(parent.opts)
	}
	return w.Scan(ctx)
}

func (mw *masterWalkers) walker(parent *Scanner, c *redis.Client, namespaces []Namespace, mask uint64) *Scanner {
	addr := c.Options().Addr
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.closed {
		return nil
	}
	if w := mw.walkers[addr]; w != nil {
		if w.mask == mask {
			return w.s
		}
		w.s.Close() // a scrape still reading it gets the pass it shares, or closedResult
	}
	opts := parent.opts
	opts.Mode, opts.Namespaces = ModeWalk, nil
	for b, ns := range namespaces {
		if mask&(1<<b) != 0 {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	s, err := NewScanner(c, opts)
	if err != nil {
		panic(err) // a subset of validated options is valid
	}
	if mw.walkers == nil {
		mw.walkers = map[string]*masterWalker{}
	}
	mw.walkers[addr] = &masterWalker{mask: mask, s: s}
	return s
}

// forget stops the walker of a master that is gone.
func (mw *masterWalkers) forget(addr string) {
	mw.mu.Lock()
	w := mw.walkers[addr]
	delete(mw.walkers, addr)
	mw.mu.Unlock()
	if w != nil {
		w.s.Close()
	}
}

func (mw *masterWalkers) close() {
	mw.mu.Lock()
	mw.closed = true
	walkers := mw.walkers
	mw.walkers = nil
	mw.mu.Unlock()
	for _, w := range walkers {
		w.s.Close()
	}
}

// walkResyncing walks, concurrently, each master whose part asks for a walk, for just the
// namespaces it cannot serve, and returns the walks by part.
func (ci *clusterIndex) walkResyncing(ctx context.Context, nodes []*indexNode, parts []indexServe) []walkOf {
	walks := make([]walkOf, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		if p.walk == 0 || p.err != nil || p.partial != nil {
			continue
		}
		walks[i].mask = p.walk
		wg.Go(func() { walks[i].res = ci.walkers.scan(ctx, ci.s, nodes[i].client, ci.namespaces, p.walk) })
	}
	wg.Wait()
	return walks
}

// resyncPoll is how often a scrape looks whether a master's resync has ended.
const resyncPoll = 20 * time.Millisecond

// awaitResyncs gives each master that asked to be walked only because it resyncs up to half the
// scrape's remaining time to finish its resync, and then asks it again: the resync's build is a
// walk of that master already, and a scrape that walked it beside the build would double what a
// slot move costs it. A master still resyncing at that point is walked, with half the time left.
func (ci *clusterIndex) awaitResyncs(ctx context.Context, nodes []*indexNode, parts []indexServe) {
	deadline := time.Now().Add(ci.s.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	until := time.Now().Add(time.Until(deadline) / 2)
	var wg sync.WaitGroup
	for i, p := range parts {
		if !onlyResyncing(p) {
			continue
		}
		n := nodes[i]
		wg.Go(func() {
			// Asked again, it may start another resync: one begun mid-move (a redirected
			// re-read) can end before the move does, and the slots it then serves differ.
			for onlyResyncing(parts[i]) && n.awaitCurrent(ctx, until) {
				parts[i] = n.collect(ctx)
				if onlyResyncing(parts[i]) && n.isCurrent() {
					break // a current index that serves nothing: a master failed over
				}
			}
		})
	}
	wg.Wait()
}

// onlyResyncing reports whether p asks for a walk only because its master resyncs.
func onlyResyncing(p indexServe) bool {
	if p.walk == 0 || p.err != nil || p.partial != nil {
		return false
	}
	for _, why := range p.walkWhy {
		if why != reasonResyncing {
			return false
		}
	}
	return true
}

func (n *indexNode) isCurrent() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current && n.refused == nil
}

// awaitCurrent waits until the node's index is current again (its resync ended), until, or ctx.
func (n *indexNode) awaitCurrent(ctx context.Context, until time.Time) bool {
	t := time.NewTicker(resyncPoll)
	defer t.Stop()
	for {
		if n.isCurrent() {
			return true
		}
		if !time.Now().Before(until) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
