package testkit

import (
	"runtime"
	"sync"
	"time"
)

// PeakHeap runs f while sampling the live Go heap every 2ms and returns the largest HeapAlloc
// seen, the heap as f returns included (so a short f is measured even if no tick fell inside
// it). It collects garbage first, so that what an earlier step left behind is not counted.
func PeakHeap(f func()) uint64 {
	runtime.GC()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return max(peak, ms.HeapAlloc)
}

// LiveHeap returns the live Go heap (HeapAlloc) after a collection: what the program still
// holds, without the garbage it has not yet collected.
func LiveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
