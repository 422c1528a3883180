package collectors

import (
	"context"
	"sync"

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
