package index

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"unsafe"
)

// KeyStore maps key names to the index's entries in a few large allocations instead of one map
// slot, string header and string allocation per key (a map[string]Entry with a 32-byte entry
// costs about 134 bytes of heap per key at 1M keys; this costs about 53 plus the name
// and its length byte, 70 with 16-byte names: docs/exporter.md, "Cost"):
//
//   - names: every key's name, uvarint length first, appended to one byte arena. An entry
//     names its key by arena offset (4 bytes instead of a 16-byte header and an allocation).
//     Bytes once written are never written again, so a string viewing them (see key) stays
//     valid and immutable; a removed or re-added key leaves garbage, which a compaction into a
//     new arena drops once it exceeds the live names.
//   - chunks: the entries and their names' arena offsets, in fixed chunks of slots (parallel
//     arrays: no padding between an entry and its offset). A chunk is added when the last is
//     full, so growing never copies the entries nor holds two arrays of them, and at most one
//     chunk is unused; a removed key's slot goes on free and is reused.
//   - table: an open-addressing hash table (linear probing) of slot+1, 0 for empty: 4 bytes a
//     table slot, at a load of at most 0.8 (0.5 after it grows): 5.2 bytes a key at 1M keys,
//     where a map[string]uint32 of arena-backed names takes 56 (BenchmarkKeyStoreTableHeap).
//     Removal shifts later entries back instead of leaving tombstones, so a probe ends at the
//     first empty slot at any churn.
//
// A slot is the entry and its 4-byte offset: the index's entry is 56 bytes, and one more 8-byte
// field in it costs 8 bytes a key (2048 slots of any multiple of 4 bytes still fill whole pages).
//
// Like a Go map, it keeps its chunks and table at their largest until it is emptied (removed
// slots and table room are reused). The zero KeyStore is empty and ready to use. It is not safe
// for concurrent use.
type KeyStore struct {
	arena   []byte
	garbage int // arena bytes no live key uses
	chunks  []*slotChunk
	slots   int // slots handed out, live or free
	free    []uint32
	table   []uint32
	live    int
	seed    maphash.Seed
}

// chunkBits sets the slots a chunk holds: 2048, 120 KiB. A chunk is a large object, allocated in
// whole 8 KiB pages: 2048 slots of any size that is a multiple of 4 bytes fill their pages
// exactly (1024 slots of 36 bytes would waste half a page in five).
const chunkBits = 11

// slotChunk holds slots i<<chunkBits to (i+1)<<chunkBits-1.
type slotChunk struct {
	entries [1 << chunkBits]Entry
	names   [1 << chunkBits]uint32 // arena offset of the slot's name; deadName for a free slot
}

func (s *KeyStore) entry(slot uint32) *Entry {
	return &s.chunks[slot>>chunkBits].entries[slot&(1<<chunkBits-1)]
}

func (s *KeyStore) name(slot uint32) *uint32 {
	return &s.chunks[slot>>chunkBits].names[slot&(1<<chunkBits-1)]
}

// deadName marks a free slot in slotChunk.names.
const deadName = math.MaxUint32

// maxArena is the arena's size limit: offsets are 4 bytes.
const maxArena = math.MaxUint32 - 1

// minCompact is the least garbage worth a compaction (smaller arenas are left alone).
const minCompact = 64 << 10

// tableSize is the table length for n keys: a load of 0.5, at least 8 slots.
func tableSize(n int) int { return max(8, 2*n) }

func (s *KeyStore) Len() int { return s.live }

// key returns slot i's name, a string viewing the arena (no copy: see KeyStore).
func (s *KeyStore) key(i uint32) string {
	off := *s.name(i)
	n, w := binary.Uvarint(s.arena[off:])
	b := s.arena[int(off)+w : int(off)+w+int(n)]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// home is key's first table slot: a multiply-shift of the hash onto the table's length, so the
// table needs no power-of-two size.
func (s *KeyStore) home(key string) int {
	h := maphash.String(s.seed, key)
	return int((h >> 32) * uint64(len(s.table)) >> 32)
}

// find returns key's table position and slot, or ok false and the empty position that ends its
// probe.
func (s *KeyStore) find(key string) (pos int, slot uint32, ok bool) {
	if len(s.table) == 0 {
		return 0, 0, false
	}
	for pos = s.home(key); ; pos = s.next(pos) {
		t := s.table[pos]
		if t == 0 {
			return pos, 0, false
		}
		if s.key(t-1) == key {
			return pos, t - 1, true
		}
	}
}

func (s *KeyStore) next(pos int) int {
	if pos++; pos == len(s.table) {
		return 0
	}
	return pos
}

func (s *KeyStore) Get(key string) (Entry, bool) {
	_, slot, ok := s.find(key)
	if !ok {
		return Entry{}, false
	}
	return *s.entry(slot), true
}

// set adds key or replaces its entry, and returns the entry it replaced, if any.
func (s *KeyStore) Set(key string, e Entry) (old Entry, had bool) {
	pos, slot, ok := s.find(key)
	if ok {
		old, *s.entry(slot) = *s.entry(slot), e
		return old, true
	}
	if (s.live+1)*5 > len(s.table)*4 { // past a load of 0.8
		s.rehash(tableSize(s.live + 1))
		pos, _, _ = s.find(key)
	}
	off := s.appendName(key)
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		if s.slots == len(s.chunks)<<chunkBits {
			s.chunks = append(s.chunks, new(slotChunk))
		}
		slot = uint32(s.slots)
		s.slots++
	}
	*s.entry(slot), *s.name(slot) = e, off
	s.table[pos] = slot + 1
	s.live++
	return Entry{}, false
}

// remove deletes key and reports whether it was there.
func (s *KeyStore) Remove(key string) bool {
	_, had := s.Take(key)
	return had
}

// take deletes key and returns its entry, if it was there.
func (s *KeyStore) Take(key string) (old Entry, had bool) {
	pos, slot, ok := s.find(key)
	if !ok {
		return Entry{}, false
	}
	old = *s.entry(slot)
	s.garbage += s.nameLen(slot)
	*s.name(slot), *s.entry(slot) = deadName, Entry{}
	s.free = append(s.free, slot)
	s.live--
	// Backward shift: move each later member of the probe run whose home is not between the
	// hole and it into the hole, so that no probe meets a gap before its key.
	hole := pos
	for i := s.next(pos); s.table[i] != 0; i = s.next(i) {
		h := s.home(s.key(s.table[i] - 1))
		if between(hole, h, i) {
			continue
		}
		s.table[hole] = s.table[i]
		hole = i
	}
	s.table[hole] = 0
	if s.live == 0 {
		*s = KeyStore{seed: s.seed, table: s.table[:len(s.table):len(s.table)]}
		clear(s.table)
	} else if s.garbage >= minCompact && s.garbage > len(s.arena)-s.garbage {
		s.compact()
	}
	return old, true
}

// between reports whether h lies cyclically in (hole, i]: a key homed there must stay after the
// hole.
func between(hole, h, i int) bool {
	if hole <= i {
		return hole < h && h <= i
	}
	return hole < h || h <= i
}

func (s *KeyStore) nameLen(slot uint32) int {
	n, w := binary.Uvarint(s.arena[*s.name(slot):])
	return w + int(n)
}

// appendName writes key at the arena's end, compacting first when that would pass maxArena.
func (s *KeyStore) appendName(key string) uint32 {
	need := binary.MaxVarintLen64 + len(key)
	if len(s.arena)+need > maxArena && s.garbage > 0 {
		s.compact()
	}
	if len(s.arena)+need > maxArena {
		// 4 GiB of live key names: far past any memory limit the index budget allows.
		panic(fmt.Sprintf("lock key index: key names exceed %d bytes", maxArena))
	}
	off := uint32(len(s.arena))
	s.arena = binary.AppendUvarint(s.arena, uint64(len(key)))
	s.arena = append(s.arena, key...)
	return off
}

// compact copies the live names into a new arena. The old one is left as it is: strings that
// view it (a caller's key) stay valid until dropped.
func (s *KeyStore) compact() {
	arena := make([]byte, 0, len(s.arena)-s.garbage)
	for i := range uint32(s.slots) {
		off := *s.name(i)
		if off == deadName {
			continue
		}
		n := s.nameLen(i)
		*s.name(i) = uint32(len(arena))
		arena = append(arena, s.arena[off:int(off)+n]...)
	}
	s.arena, s.garbage = arena, 0
}

// rehash rebuilds the table with size slots.
func (s *KeyStore) rehash(size int) {
	if s.seed == (maphash.Seed{}) {
		s.seed = maphash.MakeSeed()
	}
	s.table = make([]uint32, size)
	for i := range uint32(s.slots) {
		if *s.name(i) == deadName {
			continue
		}
		pos := s.home(s.key(i))
		for s.table[pos] != 0 {
			pos = s.next(pos)
		}
		s.table[pos] = i + 1
	}
}

// all yields every key and a pointer to its entry, which the caller may change in place until
// it removes the key. Keys removed during the loop are not yielded after; keys added may or may
// not be, as with a map. A key string stays valid after the loop (see KeyStore).
func (s *KeyStore) All() iter.Seq2[string, *Entry] {
	return func(yield func(string, *Entry) bool) {
		for i := uint32(0); int(i) < s.slots; i++ { // a removal may empty the store
			if *s.name(i) == deadName {
				continue
			}
			if !yield(s.key(i), s.entry(i)) {
				return
			}
		}
	}
}
