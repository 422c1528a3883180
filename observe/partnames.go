package observe

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// partNames remembers the names of the latest locks of parts: partless builds a new string
// for every part key, and a lock of parts (rueidislock's) sends each of its keys on every
// acquire and release. A slot is chosen by the part of the key after its index, so that every
// part of one lock finds the one slot that holds their name (with a slot per key, two parts of
// one lock shared a slot for about one seed in twenty and pushed each other out on every
// command). A slot is replaced whole, so a reader sees a name or nothing; a lock another lock's
// slot pushed out is named again.
type partNames struct {
	seed  maphash.Seed
	slots [64]atomic.Pointer[string]
}

func newPartNames() *partNames { return &partNames{seed: maphash.MakeSeed()} }

// of is partless(key).
func (n *partNames) of(key string) string {
	head, tail, ok := cutPartIndex(key)
	if !ok {
		return key
	}
	slot := &n.slots[maphash.String(n.seed, tail)%uint64(len(n.slots))]
	if p := slot.Load(); p != nil && isJoin(*p, head, tail) {
		return *p
	}
	name := head + tail
	slot.Store(&name)
	return name
}

// isJoin reports whether s is head+tail, without building it.
func isJoin(s, head, tail string) bool {
	return len(s) == len(head)+len(tail) && strings.HasPrefix(s, head) && strings.HasSuffix(s, tail)
}
