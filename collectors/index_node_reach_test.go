package collectors

import (
	"github.com/lockwatch/lockwatch/collectors/internal/index"
)

// The tests of this package that look inside an index node or the cluster index, beyond what a
// scrape's Result and metrics show, do it through the helpers below and nowhere else: each reads
// the node's own read-only inspection (Inspect, EntryOf, Masters, Counts). The tests that
// act on a node are internal/index's: they start a node of their own.

// nodeOf is the index of a Scanner over one server (or the master behind Sentinel).
func nodeOf(s *Scanner) *index.Node { return s.index.node }

// clusterOf is the index of a Scanner over a Redis Cluster.
func clusterOf(s *Scanner) *index.Cluster { return s.index.cluster }

// mastersOf is the cluster index's node of each master, by address, as last listed.
func mastersOf(ci *index.Cluster) map[string]*index.Node { return ci.Masters() }

// clusterCounts is the cluster index's share of the index figures a Result carries.
func clusterCounts(ci *index.Cluster) index.Counts { return ci.Counts() }

// nodeCounts is n's share of the index figures a Result carries.
func nodeCounts(n *index.Node) index.Counts { return n.Counts() }

// feedOf reports whether n's feed is keyspace notifications (else tracking), and whether its
// index follows the feed.
func feedOf(n *index.Node) (notifications, following bool) {
	in := n.Inspect()
	return in.Notifications, in.Following
}

// readsExpireTime reports whether n reads expiry as PEXPIRETIME (Redis 7 or later).
func readsExpireTime(n *index.Node) bool { return n.Inspect().ExpireTime }

// nodeCurrent reports whether n's index follows its feed and is not refused.
func nodeCurrent(n *index.Node) bool { return n.Inspect().Current }

// buildSettled reports whether n has a complete index, and the refusal that stopped it.
func buildSettled(n *index.Node) (built bool, refused error) {
	in := n.Inspect()
	return in.Built, in.Refused
}

// resyncProgress is how many resyncs n has begun, for every reason, and whether the build of the
// last has begun (a build is under way, or the index is current again), read together.
func resyncProgress(n *index.Node) (resyncs int64, buildBegun bool) {
	in := n.Inspect()
	return in.Resyncs, in.BuildBegun
}

// indexedEntry is n's entry of key as last read, and whether a complete index exists.
func indexedEntry(n *index.Node, key string) (e index.Entry, has, built bool) { return n.EntryOf(key) }
