package collectors

import (
	"math/bits"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
)

// Hold ages from the index. A lock's hold age is the server's TIME less the acquisition time in
// its holder record ({L}:holder, written by lease with Policy.RecordHolder). The index keeps the
// acquisition time per lock (indexEntry.acquired), read with the lock wherever a namespace that
// declares ExpectedMaxHold matches it: by the build's walk, by the backstop walk, and by every
// re-read the change feed asks for. The time only changes when the holder key is written, and
// the feed names the holder key then (its "{…" prefix is tracked), so a scrape ages the kept
// times against its own TIME and serves what a fresh walk would read.

// withHeld sets r's hold ages from its namespace's aggregate a, as the walk sets them.
func withHeld(r *index.ServedNamespace, a index.HeldAggregate) {
	r.LongestHeld, r.MaxHeld, r.HasHeld = a.Top.Sorted(), a.Max, a.Has
}

func trailingZeros(m uint64) int { return bits.TrailingZeros64(m) }
