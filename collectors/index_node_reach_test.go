package collectors

import (
	"context"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
)

// The tests of this package that look inside an index node or the cluster index, beyond what a
// scrape's Result and metrics show, do it through the helpers below and nowhere else. Those
// that read go through the node's own read-only inspection (inspect, entryOf, masters, Counts,
// maskOf); those that act on a node (change its index, run its backstop walk, read its server's
// identity or re-read keys under its lock, judge its feed, stall a listing of the masters)
// reach its unexported state, each under the lock that guards it, as the node's own code does.

// nodeOf is the index of a Scanner over one server (or the master behind Sentinel).
func nodeOf(s *Scanner) *indexNode { return s.index.node }

// clusterOf is the index of a Scanner over a Redis Cluster.
func clusterOf(s *Scanner) *clusterIndex { return s.index.cluster }

// mastersOf is the cluster index's node of each master, by address, as last listed.
func mastersOf(ci *clusterIndex) map[string]*indexNode { return ci.masters() }

// clusterCounts is the cluster index's share of the index figures a Result carries.
func clusterCounts(ci *clusterIndex) index.Counts { return ci.Counts() }

// nodeCounts is n's share of the index figures a Result carries.
func nodeCounts(n *indexNode) index.Counts { return n.Counts() }

// feedOf reports whether n's feed is keyspace notifications (else tracking), and whether its
// index follows the feed.
func feedOf(n *indexNode) (notifications, following bool) {
	in := n.inspect()
	return in.Notifications, in.Following
}

// nodeMask is the mask of the indexed namespaces key counts under on n.
func nodeMask(n *indexNode, key string) uint64 { return n.maskOf(key) }

// readsExpireTime reports whether n reads expiry as PEXPIRETIME (Redis 7 or later).
func readsExpireTime(n *indexNode) bool { return n.inspect().ExpireTime }

// nodeCurrent reports whether n's index follows its feed and is not refused.
func nodeCurrent(n *indexNode) bool { return n.inspect().Current }

// buildSettled reports whether n has a complete index, and the refusal that stopped it.
func buildSettled(n *indexNode) (built bool, refused error) {
	in := n.inspect()
	return in.Built, in.Refused
}

// resyncProgress is how many resyncs n has begun, for every reason, and whether the build of the
// last has begun (a build is under way, or the index is current again), read together.
func resyncProgress(n *indexNode) (resyncs int64, buildBegun bool) {
	in := n.inspect()
	return in.Resyncs, in.BuildBegun
}

// indexedEntry is n's entry of key as last read, and whether a complete index exists.
func indexedEntry(n *indexNode, key string) (e index.Entry, has, built bool) { return n.entryOf(key) }

// stallListing holds the cluster index's listing of the masters, as a listing stuck on a hung
// master does, until release is called.
func stallListing(ci *clusterIndex) (release func()) {
	ci.refreshMu.Lock()
	return ci.refreshMu.Unlock
}

// holdingSync runs f with n's syncMu held: no drain, scrape or swap of the index runs meanwhile.
func holdingSync(n *indexNode, f func()) {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	f()
}

// withIndex runs f on n's last complete index (nil before the first build) with syncMu held.
func withIndex(n *indexNode, f func(idx *index.KeyIndex)) {
	holdingSync(n, func() { f(n.idx) })
}

// identityRead is one reading of n's server identity, as the feed loop's check makes it; the
// caller holds syncMu (holdingSync), as the feed loop does.
func identityRead(ctx context.Context, n *indexNode) (index.ServerIdentity, error) {
	id, _, _, err := n.readIdentity(ctx, false)
	return id, err
}

// rereadKeys re-reads keys into n's index as a drain does when the feed names them; the caller
// holds syncMu (holdingSync), as a drain does.
func rereadKeys(ctx context.Context, n *indexNode, keys []string) error {
	return n.reread(ctx, n.idx, keys)
}

// runBackstop runs one backstop walk of n now, outside its schedule.
func runBackstop(ctx context.Context, n *indexNode) { n.backstop(ctx) }

// judgeBackstop judges n's feed as a backstop walk that made corrections does.
func judgeBackstop(n *indexNode, corrections int) {
	holdingSync(n, func() { n.judgeFeedByBackstop(corrections) })
}
