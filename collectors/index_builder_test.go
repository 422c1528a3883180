package collectors

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// reading is one key as a build's walk reads it.
type reading struct {
	key   string
	ns    uint64 // 0: gone
	ttl   time.Duration
	idle  time.Duration
	fence bool
}

// feedBuild gives a builder the readings, one batch each, as a pass would.
func feedBuild(b *indexBuilder, rs []reading, at int64) {
	for _, r := range rs {
		bt := newBatch(1)
		bt.keys = append(bt.keys, r.key)
		for m := r.ns | 1; m != 0; m &= m - 1 { // a gone key was still classified
			bt.ns = append(bt.ns, int32(trailingZeros(m)))
		}
		bt.off = append(bt.off, int32(len(bt.ns)))
		reply := keyReply{info: KeyInfo{TTL: NoTTL, Idle: r.idle}, typ: TypeString, expireAt: -1, gone: r.ns == 0, fence: r.fence}
		if r.ttl > 0 {
			reply.info.TTL, reply.expireAt = r.ttl, at+r.ttl.Milliseconds()
		}
		b.add(bt, []keyReply{reply}, true, at)
	}
}

// snapshot is an index's keys and what aggregation reads of them (not the epoch).
func snapshot(x *keyIndex) map[string]indexEntry {
	out := map[string]indexEntry{}
	for k, e := range x.keys.all() {
		c := *e
		c.epoch = 0
		out[k] = c
	}
	return out
}

// TestIndexRebuildOnBase: a rebuild on the served index ends with exactly the index a first
// build of the same readings makes (keys kept, changed, gone, new, fence keys, a key SCAN
// returned twice with different readings), whatever a failed build before it stamped; and while
// it runs the served index keeps its figures (idle times aside).
func TestIndexRebuildOnBase(t *testing.T) {
	ns := []Namespace{{Name: "a", Pattern: "k*"}, {Name: "b", Pattern: "k*"}}
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
		clock := &serverClock{}
		first := newIndexBuilder(clock, true, ns, nil, nil)
		feedBuild(first, randomReadings(60), at)
		base := first.result()

		failed := newIndexBuilder(clock, true, ns, base, &mu) // stamps, then is abandoned
		feedBuild(failed, randomReadings(30), at)

		rebuild := randomReadings(60)
		served := snapshot(base)
		b := newIndexBuilder(clock, true, ns, base, &mu)
		feedBuild(b, rebuild, at)
		during := snapshot(base)
		for k, e := range served {
			d := during[k]
			d.touched = e.touched
			if d != e {
				t.Fatalf("round %d: the served index changed %q during the rebuild: %+v, was %+v", round, k, during[k], e)
			}
		}
		if len(during) != len(served) {
			t.Fatalf("round %d: the served index has %d keys during the rebuild, %d before", round, len(during), len(served))
		}

		fresh := newIndexBuilder(clock, true, ns, nil, nil)
		feedBuild(fresh, rebuild, at)
		want := snapshot(fresh.result())
		mu.Lock()
		got := snapshot(b.result())
		mu.Unlock()
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: rebuild on the served index:\n%v\nwant, as a first build:\n%v", round, got, want)
		}
	}
}
