package index

import (
	"context"
	"sync"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/redis/go-redis/v9"
)

// MasterWalkers walks, for a cluster's scrape, only the masters whose index cannot serve some
// namespace this time (a resync after a slot move or a failover, a refusal, the key budget):
// a resharding resyncs the two masters of each moved slot, and walking every master for that
// would make the exporter cost what the walk costs for as long as the resharding runs. Each
// walker reads one master for the namespaces that master must walk, kept while that set stays
// the same (so concurrent scrapes share its walk).
type MasterWalkers struct {
	mu      sync.Mutex
	walkers map[string]*masterWalker // by master address
	closed  bool
}

type masterWalker struct {
	mask uint64
	w    *walk.Walker
}

// Scan walks master c, with the options of a master's walk for a scrape (scrape, whose
// namespaces are the indexed ones by bit), for the namespaces in mask.
func (mw *MasterWalkers) Scan(ctx context.Context, scrape walk.Options, c *redis.Client, mask uint64) *walk.Result {
	w := mw.walker(scrape, c, mask)
	if w == nil {
		return closedWalk(scrape.Namespaces)
	}
	return w.Scan(ctx)
}

// closedWalk is the walk of a Scanner closed: nothing read of namespaces.
func closedWalk(namespaces []walk.Namespace) *walk.Result {
	res := &walk.Result{Err: walk.ErrClosed, IdleTimeAvailable: true}
	for _, ns := range namespaces {
		res.Namespaces = append(res.Namespaces, walk.NamespaceResult{Namespace: ns})
	}
	return res
}

func (mw *MasterWalkers) walker(scrape walk.Options, c *redis.Client, mask uint64) *walk.Walker {
	addr := c.Options().Addr
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.closed {
		return nil
	}
	if w := mw.walkers[addr]; w != nil {
		if w.mask == mask {
			return w.w
		}
		w.w.Close() // a scrape still reading it gets the walk it shares, or closedResult
	}
	opts := scrape
	opts.Namespaces = nil
	for b, ns := range scrape.Namespaces {
		if mask&(1<<b) != 0 {
			opts.Namespaces = append(opts.Namespaces, ns)
		}
	}
	w := walk.NewWalker(context.Background(), c, opts)
	if mw.walkers == nil {
		mw.walkers = map[string]*masterWalker{}
	}
	mw.walkers[addr] = &masterWalker{mask: mask, w: w}
	return w
}

// Forget stops the walker of a master that is gone.
func (mw *MasterWalkers) Forget(addr string) {
	mw.mu.Lock()
	w := mw.walkers[addr]
	delete(mw.walkers, addr)
	mw.mu.Unlock()
	if w != nil {
		w.w.Close()
	}
}

func (mw *MasterWalkers) Close() {
	mw.mu.Lock()
	mw.closed = true
	walkers := mw.walkers
	mw.walkers = nil
	mw.mu.Unlock()
	for _, w := range walkers {
		w.w.Close()
	}
}
