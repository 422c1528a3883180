package index

import (
	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
)

// feedFollower is the part of an Node that follows the change feed: the feed, the keys it
// named that are being re-read or cannot be, and what a re-read found that the feed cannot
// follow. The feed loop drains it every FeedInterval, a scrape before it serves, the backstop
// walk before each comparison.
//
// Locks: feed, changedSince, unreadable, drainEvents, drainChanged, absentHolds and departed
// are guarded by the node's syncMu (every drain holds it); redirected, feedState and the rest of
// slotMoveWatch by the node's mu.
type feedFollower struct {
	feed *ChangeFeed // nil while no feed is open: between builds, after a refusal
	// changedSince, while a backstop walk runs, collects every key a drain re-read since the
	// walk began: the walk does not judge them, its own reading of them may be older.
	changedSince map[string]bool
	// unreadable holds each changed key whose re-read Redis refused (NOPERM on the key, say),
	// with the refusal: its entry may be stale, so its namespaces fail until a re-read
	// succeeds, and each scrape tries again.
	unreadable map[string]error
	// drainEvents, during a drain of a notifications feed, holds the ordered events of each
	// lock key being re-read: the lifecycle counts them (observe) instead of comparing readings.
	drainEvents map[string][]string
	// absentHolds are holds a notifications drain left live on keys its re-read found gone:
	// their end's events come with a later drain. Bounded by an eighth of the key budget,
	// emptied by every build.
	absentHolds map[string]lifecycle.Hold
	// drainChanged, during a drain, holds each key being re-read with the instant (server ms)
	// its first change since its last re-read came after (ChangeFeed.Take): the lifecycle
	// tells a change before a hold's expiry from one after it by this, not by the re-read's
	// time.
	drainChanged map[string]int64
	// drainChangedBy, during a drain, is the server instant by which every key being re-read
	// had changed (changeFeed.take); 0 when the feed cannot tell.
	drainChangedBy int64

	// redirected is set when a re-read got a MOVED or ASK reply: the key's slot is moving, so
	// the node's data is changing without feed messages that a re-read can follow.
	redirected bool
	// feedState is the source of the last feed opened (feed_source.go).
	feedState feedState
	// slotMoveWatch keeps the lifecycle from counting a slot move (lifecycle_slot_moves.go).
	slotMoveWatch
}
