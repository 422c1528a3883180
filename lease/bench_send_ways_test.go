package lease

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// sendWays are the ways a Client can send its commands, the first being the baseline of the
// ratios: one command per round trip (the single-command baseline, as on a Cluster client) and
// the default (the adaptive sender).
var sendWays = []struct {
	name   string
	single bool
}{
	{"single", true},
	{"default", false},
}

// BenchmarkSendWays compares the sendWays in one process run, on the same Redis. Each round
// (one b.N iteration) runs a block of TryAcquire + Release cycles per way, in an order rotated
// from round to round: with one goroutine (a lone caller, so ns per cycle is its latency) and
// with 16 goroutines on distinct keys (throughput). Metrics on, default policy. It reports, per
// way and concurrency, the median over rounds of the ratio of its ns per cycle to the single
// way's in the same round (below 1 is faster), and the median allocations per cycle. Rounds take
// about a second; run a fixed count: -benchtime 15x.
func BenchmarkSendWays(b *testing.B) {
	const loneCycles, cyclesPerGoroutine = 400, 150
	spaces := make([]*Namespace, len(sendWays))
	for i, w := range sendWays {
		rdb := benchRedis(b, &redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true, PoolSize: 16, MinIdleConns: 16})
		spaces[i] = declareBench(b, rdb, Options{Registerer: prometheus.NewRegistry()}, Policy{TTL: 10 * time.Second})
		if w.single {
			sendAlone(spaces[i].client)
		}
		sendWayBlock(b, spaces[i], "warm:"+w.name, 16, 50)
	}
	type key struct {
		way        int
		goroutines int
	}
	ratios, allocs := map[key][]float64{}, map[key][]float64{}
	b.ResetTimer()
	for round := range b.N {
		for _, g := range []int{1, 16} {
			cycles := cyclesPerGoroutine
			if g == 1 {
				cycles = loneCycles
			}
			ns := make([]float64, len(sendWays))
			for j := range sendWays {
				i := (j + round) % len(sendWays)
				prefix := fmt.Sprintf("r%d:%s:%d", round, sendWays[i].name, g)
				nsPer, allocsPer := sendWayBlock(b, spaces[i], prefix, g, cycles)
				ns[i] = nsPer
				allocs[key{i, g}] = append(allocs[key{i, g}], allocsPer)
			}
			for i := range sendWays {
				ratios[key{i, g}] = append(ratios[key{i, g}], ns[i]/ns[0])
			}
		}
	}
	b.StopTimer()
	for i, w := range sendWays {
		for _, g := range []int{1, 16} {
			if i > 0 {
				b.ReportMetric(median(ratios[key{i, g}]), fmt.Sprintf("%s-ns-vs-single-g%d", w.name, g))
			}
			b.ReportMetric(median(allocs[key{i, g}]), fmt.Sprintf("%s-allocs/cycle-g%d", w.name, g))
		}
	}
}

// sendWayBlock runs cycles Acquire + Release cycles on each of goroutines distinct keys and
// returns the wall time and allocations per cycle.
func sendWayBlock(b *testing.B, n *Namespace, prefix string, goroutines, cycles int) (nsPerCycle, allocsPerCycle float64) {
	b.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			key := fmt.Sprintf("bench:%s:%d", prefix, g)
			for range cycles {
				if err := acquireRelease(ctx, n.TryAcquire, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	runtime.ReadMemStats(&m1)
	total := float64(goroutines * cycles)
	return float64(took.Nanoseconds()) / total, float64(m1.Mallocs-m0.Mallocs) / total
}
