package collectors

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// BenchmarkIndexHeapPerKey fills an index with n lock keys as a build does (names like
// "locks:job:123456", 16 bytes; one in three with a TTL) and reports the live heap the index
// holds per key, read with runtime.ReadMemStats after a collection, and the ns per key of an
// aggregate over it. docs/exporter.md's Cost section quotes it.
func BenchmarkIndexHeapPerKey(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			ns := walkNamespaces([]Namespace{{Name: "jobs", Pattern: "locks:job:*"}})
			st := index.ReadStamp{At: 1_700_000_000_000, IdleKnown: true, Absolute: true, Namespaces: ns}
			var perKey float64
			for b.Loop() {
				before := testkit.LiveHeap()
				x := fillIndex(n, st)
				after := testkit.LiveHeap()
				perKey = float64(after-before) / float64(n)
				b.StopTimer()
				start := time.Now()
				x.Aggregate(ns, st.At, 10)
				b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n), "aggregate-ns/key")
				runtime.KeepAlive(x)
				b.StartTimer()
			}
			b.ReportMetric(perKey, "heap-B/key")
		})
	}
}

func fillIndex(n int, st index.ReadStamp) *index.KeyIndex {
	x := index.NewKeyIndex()
	for i := range n {
		r := walk.KeyReply{Info: walk.KeyInfo{TTL: walk.NoTTL, Idle: time.Duration(i%600) * time.Second}, Type: TypeString, ExpireAt: -1}
		if i%3 == 0 {
			r.Info.TTL, r.ExpireAt = time.Minute, st.At+60_000
		}
		x.Apply("locks:job:"+strconv.Itoa(100_000+i), 1, &r, st)
	}
	return x
}

// BenchmarkKeyIndexSetGet sets 200k keys in an index, reads each back and removes half: the
// key store's map operations, as the builds and re-reads use them.
func BenchmarkKeyIndexSetGet(b *testing.B) {
	keys := make([]string, 200_000)
	for i := range keys {
		keys[i] = "locks:job:" + strconv.Itoa(100_000+i)
	}
	for b.Loop() {
		x := index.NewKeyIndex()
		for i, k := range keys {
			x.Set(k, index.Entry{Mask: 1, ExpireAt: int64(i)})
		}
		for _, k := range keys {
			if _, ok := x.Get(k); !ok {
				b.Fatalf("%s not found", k)
			}
		}
		for _, k := range keys[:len(keys)/2] {
			x.Remove(k)
		}
	}
}
