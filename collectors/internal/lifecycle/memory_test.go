package lifecycle

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRecentEndsHeap reports the live heap one remembered end takes (the takeover
// window's memory), n keys ended by expiry, read with runtime.ReadMemStats after a collection.
// docs/exporter.md's Cost section quotes it.
func BenchmarkRecentEndsHeap(b *testing.B) {
	for _, n := range []int{62_500, 500_000} {
		b.Run(fmt.Sprintf("ends=%d", n), func(b *testing.B) {
			keys := make([]string, n)
			for i := range keys {
				keys[i] = "locks:job:" + strconv.Itoa(100_000+i)
			}
			var perEnd float64
			for b.Loop() {
				before := liveHeap()
				tr := New(Config{Namespaces: []Settings{{TakeoverWindow: time.Hour}}, MaxRecentEnds: n})
				src := tr.NewSource()
				for _, k := range keys {
					h := tr.Observe(src, 1, k, Hold{}, Reading{Present: true, ExpireAt: 2000}, 1000)
					tr.Sweep(src, 1, k, h, 3000, 0)
				}
				perEnd = float64(liveHeap()-before) / float64(n)
				runtime.KeepAlive(tr)
			}
			b.ReportMetric(perEnd, "heap-B/end")
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
