package collectors

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// BenchmarkScrape scans 10k, 100k and 1M live lock keys on one real server and reports, per
// size: ns per key, Redis commands per key, the peak Go heap during a scan, and — measured on
// the same server in the same run — the PTTL ceiling of `redis-benchmark -P 100` on random
// seeded keys (and on one hot key), with the ratio of the per-key cost to it. Wall-clock time depends on what else the machine runs, so the
// Redis server's own CPU time (INFO cpu) per key and per ceiling PTTL is reported too: that
// ratio is the exporter's cost to Redis, whatever the contention. Run it with:
//
//	go test -run '^$' -bench BenchmarkScrape -benchtime 3x ./collectors
func BenchmarkScrape(b *testing.B) {
	srv := redistest.Start(b)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = admin.Close() })
	seeded := 0
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		seeded = seedBench(b, admin, seeded, n)
		ceiling, ceilingCPU := pttlCeiling(b, srv, admin, "-r", strconv.Itoa(n), "PTTL", "bench:lock:__rand_int__")
		_, hotCPU := pttlCeiling(b, srv, admin, "PTTL", "bench:lock:000000000001")
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			counter := &totalCounter{}
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
			defer c.Close()
			c.AddHook(counter)
			s, err := NewScanner(c, Options{
				Namespaces: []Namespace{{Name: "bench", Pattern: "bench:lock:*"}},
				MaxKeys:    n,
				Timeout:    5 * time.Minute,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			scan := func() {
				res := s.Scan(context.Background())
				if ns := res.Namespaces[0]; !res.Up || !ns.Complete || ns.Keys < int64(n) {
					b.Fatalf("scan: up=%v complete=%v keys=%d err=%v, want %d keys", res.Up, ns.Complete, ns.Keys, res.Err, n)
				}
			}

			scans := 0
			cpu0 := redisCPU(b, admin)
			b.ResetTimer()
			for b.Loop() {
				scan()
				scans++
			}
			b.StopTimer()
			cpuPerKey := (redisCPU(b, admin) - cpu0) / float64(scans*n)
			nsPerKey := float64(b.Elapsed().Nanoseconds()) / float64(scans*n)
			cmdsPerKey := float64(counter.n.Load()) / float64(scans*n)

			// Heap is sampled in a separate, untimed scan: ReadMemStats stops the world.
			peak := testkit.PeakHeap(scan)

			b.ReportMetric(nsPerKey, "ns/key")
			b.ReportMetric(cmdsPerKey, "cmds/key")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(ceiling, "ceiling-ns/PTTL")
			b.ReportMetric(nsPerKey/ceiling, "x-ceiling")
			b.ReportMetric(cpuPerKey, "redis-cpu-ns/key")
			b.ReportMetric(ceilingCPU, "ceiling-cpu-ns/PTTL")
			b.ReportMetric(cpuPerKey/ceilingCPU, "x-ceiling-cpu")
			b.ReportMetric(hotCPU, "hot-ceiling-cpu-ns/PTTL")
			b.ReportMetric(cpuPerKey/hotCPU, "x-hot-ceiling-cpu")
		})
	}
}

// totalCounter is a go-redis hook that counts commands, pipelined ones included, cheaply
// enough not to weigh on the timing.
type totalCounter struct {
	redishook.PassThrough
	n atomic.Int64
}

func (h *totalCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h *totalCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// seedBench adds lock keys bench:lock:<from>…<to-1> with a TTL, pipelined 10k at a time. Names
// are zero-padded to 12 digits, like redis-benchmark's __rand_int__, so that the ceiling run
// reads the same keys.
// (DEBUG POPULATE would be faster but creates keys without TTL and needs enable-debug-command.)
func seedBench(b *testing.B, c *redis.Client, from, to int) int {
	b.Helper()
	ctx := context.Background()
	for start := from; start < to; start += 10_000 {
		pipe := c.Pipeline()
		for i := start; i < min(start+10_000, to); i++ {
			pipe.Set(ctx, fmt.Sprintf("bench:lock:%012d", i), "token-0123456789abcdef", time.Hour)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	return to
}

// pttlCeiling runs redis-benchmark pipelined 100 deep with the given test arguments and returns
// the wall-clock and the Redis CPU nanoseconds per command. The like-for-like ceiling reads
// random keys among the seeded ones; the hot one reads a single key, which stays in the CPU
// cache as a scan's keys do not.
func pttlCeiling(b *testing.B, srv *redistest.Server, admin *redis.Client, test ...string) (wall, cpu float64) {
	b.Helper()
	const n = 2_000_000
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Fatal("redis-benchmark not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-tools)")
	}
	cpu0 := redisCPU(b, admin)
	args := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port()), "-P", "100", "-n", strconv.Itoa(n), "--csv"}, test...)
	out, err := exec.Command(bin, args...).Output()
	cpu = (redisCPU(b, admin) - cpu0) / n
	if err != nil {
		b.Fatalf("redis-benchmark: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		b.Fatalf("redis-benchmark output %q: %v", out, err)
	}
	rps, err := strconv.ParseFloat(rows[1][1], 64)
	if err != nil || rps <= 0 {
		b.Fatalf("redis-benchmark rps %q: %v", rows[1][1], err)
	}
	return 1e9 / rps, cpu
}

// redisCPU returns the server's used CPU time (user + system) in nanoseconds.
func redisCPU(b *testing.B, c *redis.Client) float64 {
	b.Helper()
	cpu, err := testkit.RedisCPU(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	return float64(cpu)
}
