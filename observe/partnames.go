package observe

import (
	"hash/maphash"
	"sync/atomic"
)

// partNames remembers the names of the latest locks of parts, by key: partless builds a new
// string for every part key, and a lock of parts (rueidislock's) sends each of its keys on
// every acquire and release. A slot is replaced whole, so a reader sees a key with its own
// name or nothing; a key another key's slot pushed out is named again.
type partNames struct {
	seed  maphash.Seed
	slots [64]atomic.Pointer[partName]
}

type partName struct{ key, name string }

func newPartNames() *partNames { return &partNames{seed: maphash.MakeSeed()} }

// of is partless(key).
func (n *partNames) of(key string) string {
	slot := &n.slots[maphash.String(n.seed, key)%uint64(len(n.slots))]
	if p := slot.Load(); p != nil && p.key == key {
		return p.name
	}
	name := partless(key)
	if name != key {
		slot.Store(&partName{key: key, name: name})
	}
	return name
}
