package index

import (
	"maps"
	"slices"
)

// handOverEvents passes the events of the keys just re-read (drainEvents) to Options.onEvents. The tracking
// feed has none: it names a changed key once, however many times it changed. syncMu is held.
func (n *Node) handOverEvents() {
	events := n.drainEvents
	hook := n.Opts.OnEvents
	if hook == nil || len(events) == 0 {
		return
	}
	at := n.clock.Now()
	for _, key := range slices.Sorted(maps.Keys(events)) {
		hook(key, n.maskOf(key), events[key], at)
	}
}

// following reports whether the node's index follows every change of its keys now: built from
// a walk, no resync under way, not refused, the last build not failed. Namespaces walked for
// the key budget are not followed whatever it says (budget.overMask).
func (n *Node) following() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.built && n.current && n.refused == nil && !n.failing
}

// followsNotifications reports whether the node's feed is keyspace notifications.
func (n *Node) followsNotifications() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.feedState.source == FeedKindNotifications
}

// judgeFeedByBackstop loses a notifications feed whose keys the backstop walk had to correct:
// notifications name every change of a lock key, so a correction means the feed went silent
// (switched off where CONFIG GET cannot tell, say). Tracking's corrections are only counted.
// syncMu is held.
func (n *Node) judgeFeedByBackstop(corrections int) {
	if corrections > 0 && n.feed.FromNotifications() {
		n.lose(ResyncNotificationsOff)
	}
}
