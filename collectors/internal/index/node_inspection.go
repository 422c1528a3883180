package index

import "maps"

// Inspection is a copy of an index node's feed and build state, for a caller that watches the
// node without scraping it: no scrape's answer tells which feed a node follows or how far a
// master's resync has got, and waiting by scraping would drain the very feed being watched.
// collectors' tests read it while a Scanner runs the node; this package's own tests wait on it.
type Inspection struct {
	Notifications bool  // the feed is keyspace notifications, else client tracking
	Following     bool  // the index follows every change of its keys now (following)
	Current       bool  // the index follows its feed and is not refused (isCurrent)
	Built         bool  // a complete index exists
	Refused       error // why the server refused the index, nil when it did not
	ExpireTime    bool  // the server has PEXPIRETIME, so re-reads read expiry times
	Resyncs       int64 // resyncs begun, for every reason
	BuildBegun    bool  // a build is under way, or the index is current again
}

// Inspect is a copy of n's feed and build state; Built, Refused, ExpireTime, Resyncs and
// BuildBegun are read together.
func (n *Node) Inspect() Inspection {
	in := Inspection{Notifications: n.followsNotifications(), Following: n.following(), Current: n.isCurrent()}
	n.mu.Lock()
	defer n.mu.Unlock()
	in.Built, in.Refused, in.ExpireTime = n.built, n.refused, n.absolute
	for _, c := range n.resyncs {
		in.Resyncs += c
	}
	in.BuildBegun = !n.buildStart.IsZero() || n.current
	return in
}

// EntryOf is n's entry of key as last read, and whether a complete index exists: what the feed
// has made of the key's changes so far. It waits for a drain under way.
func (n *Node) EntryOf(key string) (e Entry, has, built bool) {
	n.syncMu.Lock()
	defer n.syncMu.Unlock()
	if n.idx == nil {
		return Entry{}, false, false
	}
	e, has = n.idx.Get(key)
	return e, has, true
}

// Masters is a copy of the cluster index's node of each master, by address, as last listed.
func (ci *Cluster) Masters() map[string]*Node {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	return maps.Clone(ci.nodes)
}
