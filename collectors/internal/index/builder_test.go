package index

import (
	"fmt"
	"log/slog"
	"maps"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// reading is one key as a build's walk reads it.
type reading struct {
	key   string
	ns    uint64 // 0: gone
	ttl   time.Duration
	idle  time.Duration
	fence bool
}

// feedBuild gives a builder the readings, one batch each, as a walk would.
func feedBuild(b *Builder, rs []reading, at int64) {
	for _, r := range rs {
		bt := walk.NewBatch(1)
		bt.Keys = append(bt.Keys, r.key)
		for m := r.ns | 1; m != 0; m &= m - 1 { // a gone key was still classified
			bt.NS = append(bt.NS, int32(bits.TrailingZeros64(m)))
		}
		bt.Off = append(bt.Off, int32(len(bt.NS)))
		reply := walk.KeyReply{Info: walk.KeyInfo{TTL: walk.NoTTL, Idle: r.idle}, Type: walk.TypeString, ExpireAt: -1, Gone: r.ns == 0, Fence: r.fence}
		if r.ttl > 0 {
			reply.Info.TTL, reply.ExpireAt = r.ttl, at+r.ttl.Milliseconds()
		}
		b.Add(bt, []walk.KeyReply{reply}, true, at)
	}
}

// snapshot is an index's keys and what aggregation reads of them (not the epoch).
func snapshot(x *KeyIndex) map[string]Entry {
	out := map[string]Entry{}
	for k, e := range x.All() {
		c := *e
		c.Epoch = 0
		out[k] = c
	}
	return out
}

// TestIndexRebuildOnBase: a rebuild on the served index ends with exactly the index a first
// build of the same readings makes (keys kept, changed, gone, new, fence keys, a key SCAN
// returned twice with different readings), whatever a failed build before it stamped; and while
// it runs the served index keeps its figures (idle times aside).
func TestIndexRebuildOnBase(t *testing.T) {
	ns := []walk.Namespace{{Name: "a", Pattern: "k*", StringsOnly: true}, {Name: "b", Pattern: "k*", StringsOnly: true}}
	const at = 1_700_000_000_000
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		randomReadings := func(n int) []reading {
			var rs []reading
			for range n {
				rd := reading{key: fmt.Sprintf("k%d", r.IntN(40)), ns: uint64(r.IntN(4)), idle: time.Duration(r.IntN(5)) * time.Second}
				if r.IntN(3) == 0 {
					rd.ttl = time.Duration(1+r.IntN(3)) * time.Minute
				}
				rd.fence = r.IntN(8) == 0 && rd.ns != 0
				rs = append(rs, rd)
			}
			return rs
		}
		var mu sync.Mutex
		clock := &ServerClock{}
		first := NewBuilder(clock, true, ns, nil, nil)
		feedBuild(first, randomReadings(60), at)
		base := first.Result()

		failed := NewBuilder(clock, true, ns, base, &mu) // stamps, then is abandoned
		feedBuild(failed, randomReadings(30), at)

		rebuild := randomReadings(60)
		served := snapshot(base)
		b := NewBuilder(clock, true, ns, base, &mu)
		feedBuild(b, rebuild, at)
		during := snapshot(base)
		for k, e := range served {
			d := during[k]
			d.Touched = e.Touched
			if d != e {
				t.Fatalf("round %d: the served index changed %q during the rebuild: %+v, was %+v", round, k, during[k], e)
			}
		}
		if len(during) != len(served) {
			t.Fatalf("round %d: the served index has %d keys during the rebuild, %d before", round, len(during), len(served))
		}

		fresh := NewBuilder(clock, true, ns, nil, nil)
		feedBuild(fresh, rebuild, at)
		want := snapshot(fresh.Result())
		mu.Lock()
		counted := b.stamped.Keys + b.idx.Len()
		result := b.Result()
		got := snapshot(result)
		mu.Unlock()
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: rebuild on the served index:\n%v\nwant, as a first build:\n%v", round, got, want)
		}
		// The key budget weighs the build by these counts while it runs.
		if counted != len(want) {
			t.Fatalf("round %d: the rebuild counted %d keys before its end, built %d", round, counted, len(want))
		}
		if d := countsDiffer(result); d != "" {
			t.Fatalf("round %d: %s", round, d)
		}
	}
}

// countsDiffer says how x's counts per namespace differ from its entries, or "".
func countsDiffer(x *KeyIndex) string {
	var want [MaxNamespaces]int
	for _, e := range x.All() {
		for m := e.Mask; m != 0; m &= m - 1 {
			want[bits.TrailingZeros64(m)]++
		}
	}
	if want != x.PerNamespace {
		return fmt.Sprintf("counts per namespace %v, entries say %v", x.PerNamespace[:4], want[:4])
	}
	return ""
}

// TestIndexRebuildWithinBudget: a rebuild that the key budget cuts short of a namespace ends with
// the index a first build of the same readings makes less that namespace, whichever keys the
// build had stamped in the base or read anew when the budget sent it to the walk, and with its
// counts per namespace equal to its entries.
func TestIndexRebuildWithinBudget(t *testing.T) {
	ns := []walk.Namespace{{Name: "a", Pattern: "k*", StringsOnly: true}, {Name: "b", Pattern: "k*", StringsOnly: true}, {Name: "c", Pattern: "k*", StringsOnly: true}}
	const at = 1_700_000_000_000
	r := rand.New(rand.NewPCG(3, 4))
	readings := func(n int) []reading {
		var rs []reading
		for range n {
			rd := reading{key: fmt.Sprintf("k%d", r.IntN(60)), ns: uint64(r.IntN(8))}
			rd.fence = r.IntN(8) == 0 && rd.ns != 0
			rs = append(rs, rd)
		}
		return rs
	}
	excluded := 0
	for round := range 300 {
		var mu sync.Mutex
		clock := &ServerClock{}
		first := NewBuilder(clock, true, ns, nil, nil)
		feedBuild(first, readings(80), at)
		base := first.Result()

		rebuild := readings(80)
		budget := NewKeyBudget(10+r.IntN(40), ns, slog.New(slog.DiscardHandler))
		b := NewBuilder(clock, true, ns, base, &mu)
		b.ChargeTo(budget, "rebuilt node")
		feedBuild(b, rebuild, at)
		mu.Lock()
		for i, n := range b.stamped.PerNamespace {
			if n < 0 || b.stamped.Keys < 0 {
				t.Fatalf("round %d: stamped counts %d keys, namespace %d: %d", round, b.stamped.Keys, i, n)
			}
		}
		result := b.Result()
		got := snapshot(result)
		mu.Unlock()

		fresh := NewBuilder(clock, true, ns, nil, nil)
		feedBuild(fresh, rebuild, at)
		want := fresh.Result()
		for m := budget.OverMask(); m != 0; m &= m - 1 {
			want.DropNamespace(bits.TrailingZeros64(m))
			excluded++
		}
		if !maps.Equal(got, snapshot(want)) {
			t.Fatalf("round %d (walked %b): rebuild within the budget:\n%v\nwant:\n%v", round, budget.OverMask(), got, snapshot(want))
		}
		if d := countsDiffer(result); d != "" {
			t.Fatalf("round %d: %s", round, d)
		}
	}
	if excluded == 0 {
		t.Fatal("no round sent a namespace to the walk: the test tests nothing")
	}
}
