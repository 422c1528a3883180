package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
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
		if err := testkit.SeedMixedKeyspace(context.Background(), admin, seeded, locks); err != nil {
			b.Fatal(err)
		}
		seeded = locks
		for _, namespaces := range []int{3, 8} {
			b.Run(fmt.Sprintf("locks=%d/namespaces=%d", locks, namespaces), func(b *testing.B) {
				benchMixed(b, srv, admin, locks, namespaces)
			})
		}
	}
}

func benchMixed(b *testing.B, srv *redistest.Server, admin *redis.Client, locks, namespaces int) {
	counter := &totalCounter{}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true, PoolSize: ConnectionsPerNode()})
	defer c.Close()
	c.AddHook(counter)
	opts := Options{MaxKeys: locks, Timeout: 5 * time.Minute}
	for _, name := range testkit.MixedKeyspaceNamespaces()[:namespaces] {
		opts.Namespaces = append(opts.Namespaces, Namespace{Name: name, Pattern: testkit.MixedKeyspacePattern(name)})
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
	peak := testkit.PeakHeap(scan)
	b.ReportMetric(wall/1e9, "s/scrape")
	b.ReportMetric(cpu/1e9, "redis-cpu-s/scrape")
	b.ReportMetric(float64(scanCalls)/float64(scans+1), "scans/scrape")
	b.ReportMetric(float64(counter.n.Load())/float64((scans+1)*locks), "cmds/lock-key")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
