package index

import (
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// A Redis Cluster reshard moves a slot's keys with MIGRATE: on the source master the key is
// deleted (a "del" event, a tracking invalidation), on the target it is restored (a "restore"
// event, an invalidation). The index follows both, so its figures stay right, but the lifecycle
// cannot: each master has a feed of its own, on its own connection, and the two halves of one
// move arrive in no common order; on the source its event is the one a client's DEL publishes
// ("del"), and on tracking neither half says why. Read as changes, every moved key would be a release on one
// master and an acquisition on the other. So a master stops counting (lifecycleMask is 0, and
// lifecycle_following reads 0 for its namespaces) from the first re-read the move redirects
// until the move is over: until the resync that the slot's change of owner causes has rebuilt
// the index, or, for a move that never changes an owner (abandoned: its keys MIGRATEd back),
// until moveWaitMax passed since the last redirected re-read. Meanwhile each key's hold is kept
// as read (a key that arrived is held, its beginning unknown), so that counting resumes from
// the keys as they are; nothing the move did is counted.
//
// A move that never changes an owner brings the keys back to the source by MIGRATE again, which
// the tracking feed names as any change: a key found there, absent from the index, that left
// by the move (departed) takes up the hold it left with, so that it is no acquisition however
// late it comes back. Keyspace notifications name its "restore", never an acquisition.
//
// A re-read is redirected by the move on both masters: on the source a key that left answers
// ASK, on the target a key that arrived answers MOVED to a read without ASKING (walk.KeyReply.
// Migrating). A target that reads an arrived key only after the slot became its own reads it
// plainly, but that read's counts are pending until the next check of the server's identity,
// which finds the slots changed and discards them (settleLifecycle).

// slotMoveWatch is the node's record of a slot move under way: movingAt and moveUnreported are
// guarded by the node's mu, departed by its syncMu.
type slotMoveWatch struct {
	// movingAt is when a re-read was last redirected by a slot move; zero when no move is
	// under way.
	movingAt time.Time
	// moveUnreported: a move stopped the counting since a scrape last served the index, so
	// that scrape reads lifecycle_following 0 even where the move is already over.
	moveUnreported bool
	// departed holds the live holds of keys a slot move took away, by key, until their expiry
	// passes; bounded, with absentHolds, by LifecycleAside. Guarded by the node's syncMu.
	departed map[string]lifecycle.Hold
}

// noteSlotMove records that a re-read was redirected by a slot move: the lifecycle stops
// counting until the move is over.
func (n *Node) noteSlotMove() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.movingAt, n.moveUnreported = time.Now(), true
}

// slotMoving reports whether a slot move keeps the lifecycle from counting at now: a re-read
// was redirected less than moveWaitMax ago and no build followed. n.mu is held.
func (n *Node) slotMoving(now time.Time) bool {
	return !n.movingAt.IsZero() && now.Sub(n.movingAt) < n.Opts.MoveWaitMax
}

// endSlotMove forgets the move: a build read the keys as they are after it. n.mu is held.
func (n *Node) endSlotMove() { n.movingAt = time.Time{} }

// takeLifecycleGap reports, for a scrape that serves the index, whether a slot move kept the
// lifecycle from counting since the last such scrape, and starts the next period.
func (n *Node) takeLifecycleGap() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	gap := n.moveUnreported || n.slotMoving(time.Now())
	n.moveUnreported = false
	return gap
}

// noteDeparture keeps the live hold of key, which a re-read redirected by a slot move found
// gone (it left for the slot's new master), in case the move brings it back. syncMu is held.
func (n *Node) noteDeparture(key string, old Entry, had bool, r *walk.KeyReply) {
	h := HoldOf(old, had)
	if !r.Gone || !h.Live() || len(n.departed)+len(n.absentHolds) >= LifecycleAside(n.Opts.KeyBudget) {
		return
	}
	if n.departed == nil {
		n.departed = map[string]lifecycle.Hold{}
	}
	n.departed[key] = h
}

// returnedHold is the hold that key, read present now and absent from the index (had false),
// left with by a slot move: it came back, and its hold goes on. A holder read that differs is
// another hold. Only the tracking feed needs it (no events of the key in this drain). syncMu is
// held.
func (n *Node) returnedHold(key string, had bool, r *walk.KeyReply) (lifecycle.Hold, bool) {
	h, ok := n.departed[key]
	if !ok || had || r.Gone || len(n.drainEvents[key]) > 0 {
		return lifecycle.Hold{}, false
	}
	delete(n.departed, key)
	if h.Holder != 0 && r.HolderHash != 0 && h.Holder != r.HolderHash {
		return lifecycle.Hold{}, false
	}
	if r.HolderHash != 0 {
		h.Holder = r.HolderHash
	}
	return h, true
}

// forgetDeparted drops the departed holds whose expiry passed by now (server ms): such a hold
// cannot come back live. syncMu is held.
func (n *Node) forgetDeparted(now int64) {
	for key, h := range n.departed {
		if h.ExpireAt != 0 && h.ExpireAt < now {
			delete(n.departed, key)
		}
	}
}
