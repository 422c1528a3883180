package collectors

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redistest"
)

// BenchmarkScrapeMixed scans a mixed keyspace: lock keys in three namespaces (string locks with
// TTLs from 10s to 10 min, one in fifty without TTL) plus as many unrelated keys of several types
// (strings, hashes, lists, sets). It reports per scrape the SCAN calls, commands per lock key,
// wall time, Redis CPU and the peak Go heap, for 3 and for 8 namespaces over the same keyspace
// (the five extra namespaces match nothing). Run it with:
//
//	go test -run '^$' -bench BenchmarkScrapeMixed -benchtime 3x ./collectors
func BenchmarkScrapeMixed(b *testing.B) {
	srv := redistest.Start(b)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = admin.Close() })
	seeded := 0
	for _, locks := range []int{100_000, 1_000_000} {
		seeded = seedMixedBench(b, admin, seeded, locks)
		for _, namespaces := range []int{3, 8} {
			b.Run(fmt.Sprintf("locks=%d/namespaces=%d", locks, namespaces), func(b *testing.B) {
				benchMixed(b, srv, admin, locks, namespaces)
			})
		}
	}
}

// mixedNamespaces are the three namespaces of the mixed keyspace, then five that match nothing.
var mixedNamespaces = []string{"sched", "wf", "approval", "none1", "none2", "none3", "none4", "none5"}

func benchMixed(b *testing.B, srv *redistest.Server, admin *redis.Client, locks, namespaces int) {
	counter := &totalCounter{}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true, PoolSize: ConnectionsPerNode()})
	defer c.Close()
	c.AddHook(counter)
	opts := Options{MaxKeys: locks, Timeout: 5 * time.Minute}
	for _, name := range mixedNamespaces[:namespaces] {
		opts.Namespaces = append(opts.Namespaces, Namespace{Name: name, Pattern: "app:" + name + ":lock:*"})
	}
	s, err := NewScanner(c, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var scanCalls int64
	scan := func() {
		res := s.Scan(context.Background())
		total := int64(0)
		for _, ns := range res.Namespaces {
			if !ns.Complete {
				b.Fatalf("scan: %s incomplete: %v", ns.Namespace.Name, res.Err)
			}
			total += ns.Keys
		}
		if !res.Up || total != int64(locks) {
			b.Fatalf("scan: up=%v keys=%d err=%v, want %d", res.Up, total, res.Err, locks)
		}
		scanCalls += res.ScanCalls
	}
	scans := 0
	cpu0 := redisCPU(b, admin)
	b.ResetTimer()
	for b.Loop() {
		scan()
		scans++
	}
	b.StopTimer()
	cpu := (redisCPU(b, admin) - cpu0) / float64(scans)
	wall := float64(b.Elapsed().Nanoseconds()) / float64(scans)
	peak := peakHeapDuring(scan)
	b.ReportMetric(wall/1e9, "s/scrape")
	b.ReportMetric(cpu/1e9, "redis-cpu-s/scrape")
	b.ReportMetric(float64(scanCalls)/float64(scans+1), "scans/scrape")
	b.ReportMetric(float64(counter.n.Load())/float64((scans+1)*locks), "cmds/lock-key")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// seedMixedBench adds lock keys from..to-1 spread over the three namespaces, and as many
// unrelated keys, pipelined 10k at a time.
func seedMixedBench(b *testing.B, c *redis.Client, from, to int) int {
	b.Helper()
	ctx := context.Background()
	ttls := []time.Duration{10 * time.Second, 30 * time.Second, 60 * time.Second, 10 * time.Minute}
	for start := from; start < to; start += 10_000 {
		pipe := c.Pipeline()
		for i := start; i < min(start+10_000, to); i++ {
			ns := mixedNamespaces[i%3]
			ttl := ttls[i%len(ttls)] + time.Hour // long enough to outlive the benchmark
			if i%50 == 0 {
				ttl = 0
			}
			pipe.Set(ctx, "app:"+ns+":lock:"+strconv.Itoa(i), "token-0123456789abcdef", ttl)
			other := "app:data:" + strconv.Itoa(i)
			switch i % 4 {
			case 0:
				pipe.Set(ctx, other, "value", 0)
			case 1:
				pipe.HSet(ctx, other, "field", "value")
			case 2:
				pipe.RPush(ctx, other, "item")
			default:
				pipe.SAdd(ctx, other, "member")
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	return to
}
