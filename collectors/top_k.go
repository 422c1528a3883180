package collectors

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// longerHeld orders keys for the top-K of hold ages: longest held first, then by name.
func longerHeld(a, b walk.KeyInfo) bool {
	if a.Held != b.Held {
		return a.Held > b.Held
	}
	return a.Key < b.Key
}

// staler orders keys for the top-K: more idle first, then by name so that ties (idle time has a
// one-second resolution, so ties are common) give a stable answer from scrape to scrape.
func staler(a, b walk.KeyInfo) bool {
	if a.Idle != b.Idle {
		return a.Idle > b.Idle
	}
	return a.Key < b.Key
}

// sooner orders keys for inspect's --sort ttl: shorter remaining TTL first, then by name. Only
// keys with an expiry are offered.
func sooner(a, b walk.KeyInfo) bool {
	if a.TTL != b.TTL {
		return a.TTL < b.TTL
	}
	return a.Key < b.Key
}

// topK keeps the k keys that come first by before (staler, unless made with newTopKBy) seen in a
// stream. It is a heap whose root is the kept key that comes last, so a candidate is compared
// with the root only; the index map (by label, which is
// derived from the whole key) de-duplicates keys that SCAN returned twice. Memory is O(k): a kept
// key is cut to walk.MaxKeyLabelLen bytes unless full keys were asked for.
type topK struct {
	k      int
	full   bool
	before func(a, b walk.KeyInfo) bool // the order kept: staler, unless newTopKBy says otherwise
	items  []walk.KeyInfo
	index  map[string]int
}

// newTopK keeps the k stalest keys.
func newTopK(k int, full bool) *topK { return newTopKBy(k, full, staler) }

// newTopKBy keeps the k first keys by before instead of the stalest.
func newTopKBy(k int, full bool, before func(a, b walk.KeyInfo) bool) *topK {
	return &topK{k: k, full: full, before: before, index: make(map[string]int, k)}
}

// keep prepares a key for storage: its label from the whole name, and a copy of the name (cut
// unless full) that does not pin the reply buffer it was sliced from.
func (t *topK) keep(ki walk.KeyInfo) walk.KeyInfo {
	ki.Label = KeyLabel(ki.Key)
	if !t.full && len(ki.Key) > walk.MaxKeyLabelLen {
		ki.Key, ki.Cut = ki.Key[:walk.MaxKeyLabelLen], true
	}
	ki.Key = strings.Clone(ki.Key)
	return ki
}

// offer considers one key; a key already kept is updated in place.
func (t *topK) offer(ki walk.KeyInfo) {
	// The common case, and the cheap one: not staler than the least stale kept key. (A kept key
	// that SCAN returns again no staler than that keeps its first reading.)
	if len(t.items) == t.k && !t.before(ki, t.items[0]) {
		return
	}
	ki = t.keep(ki)
	if i, ok := t.index[ki.Label]; ok {
		t.items[i] = ki
		heap.Fix(t, i)
		return
	}
	if len(t.items) < t.k {
		heap.Push(t, ki)
		return
	}
	delete(t.index, t.items[0].Label)
	t.items[0] = ki
	t.index[ki.Label] = 0
	heap.Fix(t, 0)
}

// sorted returns the kept keys in order (stalest first, for staler).
func (t *topK) sorted() []walk.KeyInfo {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b walk.KeyInfo) int {
		if t.before(a, b) {
			return -1
		}
		if t.before(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// sortedOrNil is Sorted for a list that may not be kept (nil).
func (t *topK) sortedOrNil() []walk.KeyInfo {
	if t == nil {
		return nil
	}
	return t.sorted()
}

// heap.Interface: a min-heap by staleness, so the root is the first key to evict.
func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return t.before(t.items[j], t.items[i]) }
func (t *topK) Swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.index[t.items[i].Label] = i
	t.index[t.items[j].Label] = j
}
func (t *topK) Push(x any) {
	ki := x.(walk.KeyInfo)
	t.index[ki.Label] = len(t.items)
	t.items = append(t.items, ki)
}
func (t *topK) Pop() any {
	last := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	delete(t.index, last.Label)
	return last
}
