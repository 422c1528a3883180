package collectors

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkIndexHeapPerKey fills an index with n lock keys as a build does (names like
// "locks:job:123456", 16 bytes; one in three with a TTL) and reports the live heap the index
// holds per key, read with runtime.ReadMemStats after a collection, and the ns per key of an
// aggregate over it. docs/exporter.md's Cost section quotes it.
func BenchmarkIndexHeapPerKey(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			ns := []Namespace{{Name: "jobs", Pattern: "locks:job:*"}}
			st := readStamp{at: 1_700_000_000_000, idleKnown: true, absolute: true, namespaces: ns}
			var perKey float64
			for b.Loop() {
				before := liveHeap()
				x := fillIndex(n, st)
				after := liveHeap()
				perKey = float64(after-before) / float64(n)
				b.StopTimer()
				start := time.Now()
				x.aggregate(ns, st.at, 10)
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n), "aggregate-ns/key")
				runtime.KeepAlive(x)
				b.StartTimer()
			}
			b.ReportMetric(perKey, "heap-B/key")
		})
	}
}

func fillIndex(n int, st readStamp) *keyIndex {
	x := newKeyIndex()
	for i := range n {
		r := keyReply{info: KeyInfo{TTL: NoTTL, Idle: time.Duration(i%600) * time.Second}, typ: TypeString, expireAt: -1}
		if i%3 == 0 {
			r.info.TTL, r.expireAt = time.Minute, st.at+60_000
		}
		x.apply("locks:job:"+strconv.Itoa(100_000+i), 1, &r, st)
	}
	return x
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkKeyStoreTableHeap compares the two ways of finding a key's slot that keyStore could
// use, at 1M keys inserted one by one whose names are in an arena: its open-addressing table of
// uint32 (4 bytes a table slot, as grown by the inserts), and a map[string]uint32 keyed by
// strings viewing the arena (its heap read after a collection). Bytes per key of each.
func BenchmarkKeyStoreTableHeap(b *testing.B) {
	const n = 1_000_000
	var s keyStore
	for i := range n {
		s.set("locks:job:"+strconv.Itoa(100_000+i), indexEntry{})
	}
	b.Run("open-addressing", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(4*len(s.table))/n, "heap-B/key")
	})
	b.Run("map", func(b *testing.B) {
		var perKey float64
		for b.Loop() {
			before := liveHeap()
			m := map[string]uint32{}
			for k := range s.all() {
				m[k] = 0
			}
			perKey = float64(liveHeap()-before) / n
			runtime.KeepAlive(m)
		}
		b.ReportMetric(perKey, "heap-B/key")
	})
}
