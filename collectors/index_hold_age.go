package collectors

import (
	"math/bits"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// Hold ages from the index. A lock's hold age is the server's TIME less the acquisition time in
// its holder record ({L}:holder, written by lease with Policy.RecordHolder). The index keeps the
// acquisition time per lock (indexEntry.acquired), read with the lock wherever a namespace that
// declares ExpectedMaxHold matches it: by the build's walk, by the backstop walk, and by every
// re-read the change feed asks for. The time only changes when the holder key is written, and
// the feed names the holder key then (its "{…" prefix is tracked), so a scrape ages the kept
// times against its own TIME and serves what a fresh walk would read.

// heldAggregate is one namespace's hold ages from the index, as a walk's nsState keeps them.
type heldAggregate struct {
	max time.Duration
	has bool
	top *walk.TopK // longest held first
}

// heldAges computes every namespace's longest hold and top-K by hold age as of now (server ms),
// over the keys aggregate counts (not expired, not a fence key, a type the namespace counts).
// It returns nil, without a look at the entries, when no namespace declares ExpectedMaxHold:
// then no entry carries an acquisition time.
func (x *keyIndex) heldAges(namespaces []Namespace, now int64, k int, full, fromFeed bool) []heldAggregate {
	declared := false
	for _, ns := range namespaces {
		declared = declared || ns.ExpectedMaxHold > 0
	}
	if !declared {
		return nil
	}
	out := make([]heldAggregate, len(namespaces))
	for i := range out {
		out[i].top = walk.NewTopKBy(k, full, walk.LongerHeld)
	}
	for key, e := range x.keys.All() {
		since := heldSince(e, fromFeed)
		if since == 0 || e.Fence || e.ExpireAt != 0 && e.ExpireAt < now {
			continue
		}
		held := max(0, time.Duration(now-since)*time.Millisecond)
		for mask := e.Mask; mask != 0; mask &= mask - 1 {
			b := bits.TrailingZeros64(mask)
			if !namespaces[b].wants(typeName(e.Type)) {
				continue
			}
			a := &out[b]
			if !a.has || held > a.max {
				a.max, a.has = held, true
			}
			a.top.Offer(walk.KeyInfo{Key: key, TTL: ttlAt(*e, now), Held: held, HasHeld: true})
		}
	}
	return out
}

// ttlAt is the entry's remaining TTL at now (server ms), or NoTTL.
func ttlAt(e index.Entry, now int64) time.Duration {
	if e.ExpireAt == 0 {
		return walk.NoTTL
	}
	return time.Duration(e.ExpireAt-now) * time.Millisecond
}

// withHeld sets r's hold ages from the namespace's aggregate, as the walk sets them.
func (a heldAggregate) withHeld(r *NamespaceResult) {
	r.LongestHeld, r.MaxHeld, r.HasHeld = publicKeys(a.top.Sorted()), a.max, a.has
}
