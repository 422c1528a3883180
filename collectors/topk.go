package collectors

import (
	"container/heap"
	"slices"
	"strings"
	"time"
)

// NoTTL is KeyInfo.TTL for a key without expiry (PTTL -1).
const NoTTL time.Duration = -1

// KeyInfo describes one live lock key. It never carries the key's value (the owner token).
type KeyInfo struct {
	// Key is the raw key name, possibly binary.
	Key string
	// TTL is the remaining time to live, or NoTTL.
	TTL time.Duration
	// Idle is OBJECT IDLETIME (one-second resolution); zero when idle time is unavailable.
	Idle time.Duration
}

// staler orders keys for the top-K: more idle first, then by name so that ties (idle time has a
// one-second resolution, so ties are common) give a stable answer from scrape to scrape.
func staler(a, b KeyInfo) bool {
	if a.Idle != b.Idle {
		return a.Idle > b.Idle
	}
	return a.Key < b.Key
}

// topK keeps the k stalest keys seen in a stream. It is a heap whose root is the least stale
// kept key, so a candidate is compared with the root only; the index map de-duplicates keys
// that SCAN returned twice. Memory is O(k).
type topK struct {
	k     int
	items []KeyInfo
	index map[string]int
}

func newTopK(k int) *topK {
	return &topK{k: k, index: make(map[string]int, k)}
}

// offer considers one key; a key already kept is updated in place.
func (t *topK) offer(ki KeyInfo) {
	if i, ok := t.index[ki.Key]; ok {
		t.items[i] = ki
		heap.Fix(t, i)
		return
	}
	if len(t.items) < t.k {
		// Clone so the kept key does not pin a larger buffer it may have been sliced from.
		ki.Key = strings.Clone(ki.Key)
		heap.Push(t, ki)
		return
	}
	if !staler(ki, t.items[0]) {
		return
	}
	delete(t.index, t.items[0].Key)
	ki.Key = strings.Clone(ki.Key)
	t.items[0] = ki
	t.index[ki.Key] = 0
	heap.Fix(t, 0)
}

// sorted returns the kept keys, stalest first.
func (t *topK) sorted() []KeyInfo {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b KeyInfo) int {
		if staler(a, b) {
			return -1
		}
		if staler(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// heap.Interface: a min-heap by staleness, so the root is the first key to evict.
func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return staler(t.items[j], t.items[i]) }
func (t *topK) Swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.index[t.items[i].Key] = i
	t.index[t.items[j].Key] = j
}
func (t *topK) Push(x any) {
	ki := x.(KeyInfo)
	t.index[ki.Key] = len(t.items)
	t.items = append(t.items, ki)
}
func (t *topK) Pop() any {
	last := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	delete(t.index, last.Key)
	return last
}
