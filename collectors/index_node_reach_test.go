package collectors

import (
	"context"
	"maps"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
)

// The tests of this package that look inside an index node or the cluster index, beyond what a
// scrape's Result and metrics show, do it through the helpers below and nowhere else: they are
// the whole of the node state and node methods those tests depend on. Each takes the lock the
// field it reads is guarded by, as the node's own code does.

// nodeOf is the index of a Scanner over one server (or the master behind Sentinel).
func nodeOf(s *Scanner) *indexNode { return s.index.node }

// clusterOf is the index of a Scanner over a Redis Cluster.
func clusterOf(s *Scanner) *clusterIndex { return s.index.cluster }

// mastersOf is the cluster index's node of each master, by address, as last listed.
func mastersOf(ci *clusterIndex) map[string]*indexNode {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return maps.Clone(ci.nodes)
}

// stallListing holds the cluster index's listing of the masters, as a listing stuck on a hung
// master does, until release is called.
func stallListing(ci *clusterIndex) (release func()) {
	ci.refreshMu.Lock()
	return ci.refreshMu.Unlock
}

// clusterCounts is the cluster index's share of the index figures a Result carries.
func clusterCounts(ci *clusterIndex) index.Counts { return ci.Counts() }

// nodeCounts is n's share of the index figures a Result carries.
func nodeCounts(n *indexNode) index.Counts { return n.Counts() }

// nodeAddr is the address of n's server.
func nodeAddr(n *indexNode) string { return n.client.Options().Addr }

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

// serverMajor is the major version of the server n's index was built from.
func serverMajor(n *indexNode) int {
	var major int
	holdingSync(n, func() { major = n.ident.Major })
	return major
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

// feedOf reports whether n's feed is keyspace notifications (else tracking), and whether its
// index follows the feed.
func feedOf(n *indexNode) (notifications, following bool) {
	return n.followsNotifications(), n.following()
}

// nodeMask is the mask of the indexed namespaces key counts under on n.
func nodeMask(n *indexNode, key string) uint64 { return n.maskOf(key) }

// readsExpireTime reports whether n reads expiry as PEXPIRETIME (Redis 7 or later).
func readsExpireTime(n *indexNode) bool { return n.knownAbsolute() }

// nodeCurrent reports whether n's index follows its feed and is not refused.
func nodeCurrent(n *indexNode) bool { return n.isCurrent() }

// buildSettled reports whether n has a complete index, and the refusal that stopped it.
func buildSettled(n *indexNode) (built bool, refused error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.built, n.refused
}

// resyncProgress is how many resyncs n has begun, for every reason, and whether the build of the
// last has begun (a build is under way, or the index is current again), read together.
func resyncProgress(n *indexNode) (resyncs int64, buildBegun bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return sumResyncs(n.resyncs), !n.buildStart.IsZero() || n.current
}
