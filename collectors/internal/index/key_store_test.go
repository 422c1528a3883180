package index

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// storeOp is one step of a KeyStore test: set key to an entry (ns as the mark) or remove it.
type storeOp struct {
	remove bool
	key    string
	ns     uint64
}

func TestKeyStoreOperations(t *testing.T) {
	long := strings.Repeat("k", 300) // a two-byte length prefix
	cases := []struct {
		name string
		ops  []storeOp
		want map[string]uint64
	}{
		{"empty", nil, map[string]uint64{}},
		{"insert", []storeOp{{key: "a", ns: 1}, {key: "b", ns: 2}}, map[string]uint64{"a": 1, "b": 2}},
		{"update keeps one entry", []storeOp{{key: "a", ns: 1}, {key: "a", ns: 3}}, map[string]uint64{"a": 3}},
		{"delete", []storeOp{{key: "a", ns: 1}, {key: "b", ns: 2}, {remove: true, key: "a"}}, map[string]uint64{"b": 2}},
		{"delete absent", []storeOp{{key: "a", ns: 1}, {remove: true, key: "z"}}, map[string]uint64{"a": 1}},
		{"delete to empty then reuse", []storeOp{{key: "a", ns: 1}, {remove: true, key: "a"}, {key: "a", ns: 4}}, map[string]uint64{"a": 4}},
		{"slot reused by another key", []storeOp{{key: "a", ns: 1}, {key: "b", ns: 2}, {remove: true, key: "a"}, {key: "c", ns: 5}}, map[string]uint64{"b": 2, "c": 5}},
		{"empty and binary names", []storeOp{{key: "", ns: 1}, {key: "\x00\xff", ns: 2}, {key: long, ns: 3}}, map[string]uint64{"": 1, "\x00\xff": 2, long: 3}},
		{"prefix names differ", []storeOp{{key: "jobs:1", ns: 1}, {key: "jobs:10", ns: 2}, {remove: true, key: "jobs:1"}}, map[string]uint64{"jobs:10": 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s KeyStore
			model := map[string]uint64{}
			for _, op := range c.ops {
				applyStoreOp(t, &s, model, op)
			}
			if !maps.Equal(model, c.want) {
				t.Fatalf("the test's model %v, want %v", model, c.want)
			}
			checkStore(t, &s, c.want)
		})
	}
}

// TestKeyStoreCompaction: removing most keys compacts the arena (garbage dropped, offsets
// rewritten) and every key left still reads back; a key string taken before the compaction
// keeps its value.
func TestKeyStoreCompaction(t *testing.T) {
	var s KeyStore
	model := map[string]uint64{}
	const n = 20_000
	for i := range n {
		applyStoreOp(t, &s, model, storeOp{key: fmt.Sprintf("locks:job:%08d", i), ns: uint64(i) + 1})
	}
	var held string
	for k := range s.All() {
		held = k
		break
	}
	heldWas := strings.Clone(held)
	grown := len(s.arena)
	for i := range n {
		if i%10 != 0 {
			applyStoreOp(t, &s, model, storeOp{remove: true, key: fmt.Sprintf("locks:job:%08d", i)})
		}
	}
	if len(s.arena) >= grown/2 {
		t.Errorf("arena %d bytes after removing 90%% of %d bytes of names: not compacted", len(s.arena), grown)
	}
	if s.garbage >= minCompact && s.garbage > len(s.arena)-s.garbage {
		t.Errorf("garbage %d of arena %d after compaction", s.garbage, len(s.arena))
	}
	if held != heldWas {
		t.Errorf("a key string taken before the compaction reads %q, was %q", held, heldWas)
	}
	checkStore(t, &s, model)
}

// TestKeyStoreAgainstMap runs random sets and removals, over few keys (collisions, reuse, long
// probe runs) and many, against a plain map, checking the whole store after each phase.
func TestKeyStoreAgainstMap(t *testing.T) {
	for _, keys := range []int{8, 300, 5000} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(keys), 7))
			var s KeyStore
			model := map[string]uint64{}
			for phase := range 20 {
				for range 2000 {
					k := fmt.Sprintf("jobs:%d", r.IntN(keys))
					applyStoreOp(t, &s, model, storeOp{remove: r.IntN(3) == 0, key: k, ns: r.Uint64()})
				}
				if phase%5 == 4 { // drain most, to reach empty and compaction
					for k := range model {
						if r.IntN(10) != 0 {
							applyStoreOp(t, &s, model, storeOp{remove: true, key: k})
						}
					}
				}
				checkStore(t, &s, model)
			}
		})
	}
}

// FuzzKeyStore applies an operation stream decoded from the input to a KeyStore and a map.
func FuzzKeyStore(f *testing.F) {
	f.Add([]byte("\x01a\x02b\x81a\x03c\x82b"))
	f.Add([]byte(strings.Repeat("\x05k\x85k", 50)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s KeyStore
		model := map[string]uint64{}
		for len(data) >= 2 {
			op, n := data[0], int(data[1]%8)
			data = data[2:]
			n = min(n, len(data))
			key := string(data[:n])
			data = data[n:]
			applyStoreOp(t, &s, model, storeOp{remove: op&0x80 != 0, key: key, ns: uint64(op & 0x7f)})
		}
		checkStore(t, &s, model)
	})
}

func applyStoreOp(t *testing.T, s *KeyStore, model map[string]uint64, op storeOp) {
	t.Helper()
	if op.remove {
		_, had := model[op.key]
		delete(model, op.key)
		if got := s.Remove(op.key); got != had {
			t.Fatalf("remove(%q) = %v, want %v", op.key, got, had)
		}
		return
	}
	model[op.key] = op.ns
	s.Set(op.key, Entry{Mask: op.ns, ExpireAt: int64(len(op.key))})
}

// checkStore compares every view of the store with the model: len, get of each key and of an
// absent one, and the keys all yields.
func checkStore(t *testing.T, s *KeyStore, model map[string]uint64) {
	t.Helper()
	if s.Len() != len(model) {
		t.Fatalf("len %d, want %d", s.Len(), len(model))
	}
	for k, ns := range model {
		e, ok := s.Get(k)
		if !ok || e.Mask != ns || e.ExpireAt != int64(len(k)) {
			t.Fatalf("get(%q) = %+v %v, want ns %d", k, e, ok, ns)
		}
	}
	if _, ok := s.Get("absent:\x00"); ok {
		t.Fatal("get of an absent key found it")
	}
	var seen []string
	for k, e := range s.All() {
		if model[k] != e.Mask {
			t.Fatalf("all yields %q with ns %d, want %d", k, e.Mask, model[k])
		}
		seen = append(seen, strings.Clone(k))
	}
	slices.Sort(seen)
	if want := slices.Sorted(maps.Keys(model)); !slices.Equal(seen, want) {
		t.Fatalf("all yields %d keys, want %d", len(seen), len(want))
	}
}

// BenchmarkKeyStoreTableHeap compares the two ways of finding a key's slot that KeyStore could
// use, at 1M keys inserted one by one whose names are in an arena: its open-addressing table of
// uint32 (4 bytes a table slot, as grown by the inserts), and a map[string]uint32 keyed by
// strings viewing the arena (its heap read after a collection). Bytes per key of each.
func BenchmarkKeyStoreTableHeap(b *testing.B) {
	const n = 1_000_000
	var s KeyStore
	for i := range n {
		s.Set("locks:job:"+strconv.Itoa(100_000+i), Entry{})
	}
	b.Run("open-addressing", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(4*len(s.table))/n, "heap-B/key")
	})
	b.Run("map", func(b *testing.B) {
		var perKey float64
		for b.Loop() {
			before := testkit.LiveHeap()
			m := map[string]uint32{}
			for k := range s.All() {
				m[k] = 0
			}
			perKey = float64(testkit.LiveHeap()-before) / n
			runtime.KeepAlive(m)
		}
		b.ReportMetric(perKey, "heap-B/key")
	})
}
