package collectors

import "github.com/lockwatch/lockwatch/collectors/internal/lifecycle"

// lifecycleReport is a scrape's view of the lock lifecycles: the counters of every indexed
// namespace followed at least once, and whether the scrape found each followed.
type lifecycleReport struct {
	buckets    []float64
	namespaces []lifecycleFigures
}

// lifecycleFigures are one namespace's lifecycle counters and state.
type lifecycleFigures struct {
	name                    string
	counts                  lifecycle.Counts
	following, endsByExpiry bool
}

// lifecycleReport reads the tracker's counters for res. A namespace is following when this
// scrape served it from an index current with its feed (every master's, on a Cluster), every
// changed key of it could be read, no resync ran since the last report (a resync quicker than
// the scrape interval still missed what changed during it), and no slot move kept a master from
// counting since then. Its series exist from the first scrape that finds it following on.
func (ix *indexer) lifecycleReport(res *Result) *lifecycleReport {
	var following uint64
	if !ix.resyncedSinceLastReport(res) {
		for b, pos := range ix.indexedPos {
			r := res.Namespaces[pos]
			if res.Up && r.Mode == modeIndex && r.Indexed && r.IndexAge == 0 && r.Err == nil && !r.lifecycleGap {
				following |= 1 << b
			}
		}
	}
	ix.life.MarkFollowed(following)
	followed := ix.life.Followed()
	out := &lifecycleReport{buckets: ix.life.Buckets()}
	for b, pos := range ix.indexedPos {
		if followed&(1<<b) == 0 {
			continue
		}
		out.namespaces = append(out.namespaces, lifecycleFigures{
			name: ix.opts.Namespaces[pos].Name, counts: ix.life.Counts(b),
			following: following&(1<<b) != 0, endsByExpiry: ix.life.Settings(b).EndsByExpiry,
		})
	}
	return out
}

// resyncedSinceLastReport reports whether the index resynced since the last lifecycle report.
func (ix *indexer) resyncedSinceLastReport(res *Result) bool {
	var total int64
	for _, n := range res.IndexResyncs {
		total += n
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	resynced := total != ix.lifeResyncs
	ix.lifeResyncs = total
	return resynced
}
