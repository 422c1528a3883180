package walk

import (
	"container/heap"
	"slices"
	"strings"
)

// LongerHeld orders keys for the top-K of hold ages: longest held first, then by name.
func LongerHeld(a, b KeyInfo) bool {
	if a.Held != b.Held {
		return a.Held > b.Held
	}
	return a.Key < b.Key
}

// Staler orders keys for the top-K: more idle first, then by name so that ties (idle time has a
// one-second resolution, so ties are common) give a stable answer from scrape to scrape.
func Staler(a, b KeyInfo) bool {
	if a.Idle != b.Idle {
		return a.Idle > b.Idle
	}
	return a.Key < b.Key
}

// Sooner orders keys for inspect's --sort ttl: shorter remaining TTL first, then by name. Only
// keys with an expiry are offered.
func Sooner(a, b KeyInfo) bool {
	if a.TTL != b.TTL {
		return a.TTL < b.TTL
	}
	return a.Key < b.Key
}

// TopK keeps the k keys that come first by before (Staler, unless made with NewTopKBy) seen in a
// stream. It is a heap whose root is the kept key that comes last, so a candidate is compared
// with the root only; the index map (by label, which is
// derived from the whole key) de-duplicates keys that SCAN returned twice. Memory is O(k): a kept
// key is cut to MaxKeyLabelLen bytes unless full keys were asked for.
type TopK struct {
	k      int
	full   bool
	before func(a, b KeyInfo) bool // the order kept: Staler, unless NewTopKBy says otherwise
	items  []KeyInfo
	index  map[string]int
}

// NewTopK keeps the k stalest keys.
func NewTopK(k int, full bool) *TopK { return NewTopKBy(k, full, Staler) }

// NewTopKBy keeps the k first keys by before instead of the stalest.
func NewTopKBy(k int, full bool, before func(a, b KeyInfo) bool) *TopK {
	return &TopK{k: k, full: full, before: before, index: make(map[string]int, k)}
}

// keep prepares a key for storage: its label from the whole name, and a copy of the name (cut
// unless full) that does not pin the reply buffer it was sliced from.
func (t *TopK) keep(ki KeyInfo) KeyInfo {
	ki.Label = KeyLabel(ki.Key)
	if !t.full && len(ki.Key) > MaxKeyLabelLen {
		ki.Key, ki.Cut = ki.Key[:MaxKeyLabelLen], true
	}
	ki.Key = strings.Clone(ki.Key)
	return ki
}

// Offer considers one key; a key already kept is updated in place.
func (t *TopK) Offer(ki KeyInfo) {
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

// Sorted returns the kept keys in order (stalest first, for Staler).
func (t *TopK) Sorted() []KeyInfo {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b KeyInfo) int {
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

// Items returns the kept keys in heap order, the root (the key that comes last) first. The
// slice is the list's own: read it, never change it.
func (t *TopK) Items() []KeyInfo { return t.items }

// SortedOrNil is Sorted for a list that may not be kept (nil).
func (t *TopK) SortedOrNil() []KeyInfo {
	if t == nil {
		return nil
	}
	return t.Sorted()
}

// heap.Interface: a min-heap by staleness, so the root is the first key to evict.
func (t *TopK) Len() int           { return len(t.items) }
func (t *TopK) Less(i, j int) bool { return t.before(t.items[j], t.items[i]) }
func (t *TopK) Swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.index[t.items[i].Label] = i
	t.index[t.items[j].Label] = j
}
func (t *TopK) Push(x any) {
	ki := x.(KeyInfo)
	t.index[ki.Label] = len(t.items)
	t.items = append(t.items, ki)
}
func (t *TopK) Pop() any {
	last := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	delete(t.index, last.Label)
	return last
}
