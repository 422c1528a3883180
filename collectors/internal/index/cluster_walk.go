package index

import (
	"context"
	"sync"
	"time"
)

// walkResyncing walks, concurrently, each master whose part asks for a walk, for just the
// namespaces it cannot serve, and returns the walks by part.
func (ci *Cluster) walkResyncing(ctx context.Context, nodes []*Node, parts []Serve) []WalkOf {
	walks := make([]WalkOf, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		if p.Walk == 0 || p.Err != nil || p.Partial {
			continue
		}
		walks[i].Mask = p.Walk
		wg.Go(func() { walks[i].Res = ci.walkers.Scan(ctx, ci.env.Opts.Scrape, nodes[i].client, p.Walk) })
	}
	wg.Wait()
	return walks
}

// resyncPoll is how often a scrape looks whether a master's resync has ended.
const resyncPoll = 20 * time.Millisecond

// resyncGap is how long a master may be between builds while a scrape awaits its resync: the
// feed loop starts the build at its next tick; longer means a failed build's retry is waiting.
const resyncGap = 3 * FeedInterval

// awaitResyncs gives each master that asked to be walked only because it resyncs the chance to
// finish its resync within the scrape, and then asks it again: the resync's build is a walk of
// that master already, and a scrape that walked it beside the build would double what a slot
// move costs it. It waits while the build under way can be expected to end before the scrape's
// deadline (less a tenth, to serve it); a master whose build cannot is walked at once, with
// the time left.
func (ci *Cluster) awaitResyncs(ctx context.Context, nodes []*Node, parts []Serve) {
	deadline := time.Now().Add(ci.env.Opts.Walk.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	until := deadline.Add(-time.Until(deadline) / 10)
	var wg sync.WaitGroup
	for i, p := range parts {
		if !OnlyResyncing(p) {
			continue
		}
		n := nodes[i]
		wg.Go(func() {
			// Asked again, it may start another resync: its slots may have changed again
			// while it built (a reshard moving slot after slot).
			for OnlyResyncing(parts[i]) && n.awaitCurrent(ctx, until) {
				parts[i] = n.Collect(ctx)
				if OnlyResyncing(parts[i]) && n.isCurrent() {
					break // a current index that serves nothing: a master failed over
				}
			}
		})
	}
	wg.Wait()
}

func (n *Node) isCurrent() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current && n.refused == nil
}

// awaitCurrent waits until the node's index is current again (its resync ended), and reports
// false as soon as that cannot be expected by until, or ctx ends.
func (n *Node) awaitCurrent(ctx context.Context, until time.Time) bool {
	t := time.NewTicker(resyncPoll)
	defer t.Stop()
	idleSince := time.Now()
	for {
		n.mu.Lock()
		current := n.current && n.refused == nil
		start, took := n.buildStart, n.buildTook
		n.mu.Unlock()
		if current {
			return true
		}
		now := time.Now()
		if !start.IsZero() {
			idleSince = now
		}
		if !resyncCanEnd(now, until, start, took, now.Sub(idleSince)) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// resyncCanEnd reports whether a resync can be expected to end by until: a build under way since
// start is expected to take what the last one took (took; unknown when 0), with half of it
// again as slack; with no build under way for idle, one is expected within resyncGap.
func resyncCanEnd(now, until, start time.Time, took, idle time.Duration) bool {
	switch {
	case !now.Before(until):
		return false
	case start.IsZero():
		return idle < resyncGap
	default:
		return !start.Add(took + took/2).After(until)
	}
}
