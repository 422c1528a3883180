package index

import (
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// IndexedResult is an indexed namespace's result from its aggregate a, with its k stalest keys;
// idle is false when the server does not track idle time. The scrape that serves it names its
// namespace (mergeServed).
func IndexedResult(a NamespaceAggregate, k int, idle bool) ServedNamespace {
	r := ServedNamespace{Indexed: true, NamespaceResult: walk.NamespaceResult{
		Keys: a.Keys, KeysWithoutTTL: a.NoTTL, FenceKeys: a.Fence,
		MinTTL: a.MinTTL, HasTTL: a.HasTTL, Complete: true,
	}}
	r.Stalest = firstK(a.Top, k)
	r.StalestNoTTL = firstK(a.NoTTLTop, k)
	if idle && len(r.Stalest) > 0 {
		r.MaxIdle, r.HasIdle = r.Stalest[0].Idle, true
	}
	return r
}

// AppendHolderKeys appends the listed keys of r that are holder keys (and not cut) to keys.
func AppendHolderKeys(keys []string, r ServedNamespace) []string {
	for _, list := range [][]walk.KeyInfo{r.Stalest, r.StalestNoTTL} {
		for _, ki := range list {
			if _, ok := walk.HolderKeyOf(ki.Key); ok && !ki.Cut {
				keys = append(keys, ki.Key)
			}
		}
	}
	return keys
}

// firstK keeps the k stalest of a sorted candidate list, as the walk's top-K does (labels,
// cut names).
func firstK(t *walk.TopK, k int) []walk.KeyInfo {
	out := t.Sorted()
	return out[:min(k, len(out))]
}

// Hold ages from the index. A lock's hold age is the server's TIME less the acquisition time in
// its holder record ({L}:holder, written by lease with Policy.RecordHolder). The index keeps the
// acquisition time per lock (Entry.Acquired), read with the lock wherever a namespace that
// declares ExpectedMaxHold matches it: by the build's walk, by the backstop walk, and by every
// re-read the change feed asks for. The time only changes when the holder key is written, and
// the feed names the holder key then (its "{…" prefix is tracked), so a scrape ages the kept
// times against its own TIME and serves what a fresh walk would read.

// WithHeld sets r's hold ages from its namespace's aggregate a, as the walk sets them.
func WithHeld(r *ServedNamespace, a HeldAggregate) {
	r.LongestHeld, r.MaxHeld, r.HasHeld = a.Top.Sorted(), a.Max, a.Has
}
