package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/oliver006/redis_exporter/exporter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/sirupsen/logrus"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/redisproc"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The exporter comparison: lock-exporter's scan engine against redis_exporter's --count-keys for
// the same patterns, both in this process, on one redis-server, on a mixed keyspace: lock keys in
// three namespaces (string locks, TTLs from 10s to 10min, one in fifty without TTL) and as many
// unrelated keys of four types. Rounds alternate which exporter goes first; the results are
// medians per scrape of wall time and of the Redis server's CPU time (INFO cpu).

// cmpResult is one keyspace size.
type cmpResult struct {
	locks               int
	oursWall, oursCPU   []time.Duration
	theirWall, theirCPU []time.Duration
	scans3, scans8      int64
	peakHeapMiB         float64
}

func medianDuration(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func (r cmpResult) wallRatio() float64 {
	return medianDuration(r.oursWall).Seconds() / medianDuration(r.theirWall).Seconds()
}

func (r cmpResult) cpuRatio() float64 {
	return medianDuration(r.oursCPU).Seconds() / medianDuration(r.theirCPU).Seconds()
}

// runExporterComparison measures each size in turn on one server, adding keys between sizes.
func runExporterComparison(ctx context.Context, sizes []int, rounds int, progress io.Writer) ([]cmpResult, string, error) {
	srv, err := redisproc.Start(ctx, redisproc.Config{})
	if err != nil {
		return nil, "", err
	}
	defer srv.Stop()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer admin.Close()
	logrus.SetLevel(logrus.ErrorLevel)

	var out []cmpResult
	seeded := 0
	for _, locks := range sizes {
		fmt.Fprintf(progress, "exporter comparison: seeding %d lock keys and %d other keys…\n", locks, locks)
		if err := testkit.SeedMixedKeyspace(ctx, admin, seeded, locks); err != nil {
			return nil, "", err
		}
		seeded = locks
		res, err := compareAt(ctx, srv.Addr(), admin, locks, rounds, progress)
		if err != nil {
			return nil, "", err
		}
		out = append(out, res)
	}
	return out, redisVersion(ctx, srv.Addr()), nil
}

// compareAt measures one keyspace size: a warm-up scrape of each exporter, interleaved timed
// rounds, lock-exporter's peak heap, then the SCAN calls of 3 and of 8 namespaces.
func compareAt(ctx context.Context, addr string, admin *redis.Client, locks, rounds int, progress io.Writer) (cmpResult, error) {
	ours, closeOurs, err := newLockScanner(addr, 3, locks)
	if err != nil {
		return cmpResult{locks: locks}, err
	}
	defer closeOurs()
	theirs, err := newCountKeysExporter(addr)
	if err != nil {
		return cmpResult{locks: locks}, err
	}
	c := &comparison{ours: ours, theirs: theirs, res: cmpResult{locks: locks}}
	if err := c.warmUp(ctx); err != nil {
		return c.res, err
	}
	for r := range rounds {
		if err := c.round(ctx, admin, r); err != nil {
			return c.res, err
		}
		c.reportRound(progress, r, rounds)
	}
	c.res.peakHeapMiB = float64(testkit.PeakHeap(func() { _ = c.scrapeOurs(ctx) })) / (1 << 20)
	if err := c.countScans(ctx, addr); err != nil {
		return c.res, err
	}
	return c.res, nil
}

// comparison is the two exporters of one keyspace size and what they measured so far.
type comparison struct {
	ours   *collectors.Scanner
	theirs *prometheus.Registry
	res    cmpResult
}

// newCountKeysExporter registers redis_exporter, counting the keys of the three lock namespaces'
// patterns, on a registry of its own.
func newCountKeysExporter(addr string) (*prometheus.Registry, error) {
	var patterns []string
	for _, ns := range testkit.MixedKeyspaceNamespaces()[:3] {
		patterns = append(patterns, "db0="+testkit.MixedKeyspacePattern(ns))
	}
	return newCountKeysOf(addr, patterns)
}

// newCountKeysOf registers redis_exporter counting the keys of patterns ("db0=glob").
func newCountKeysOf(addr string, patterns []string) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if _, err := exporter.NewRedisExporter("redis://"+addr, exporter.Options{
		Namespace:          "redis",
		CountKeys:          strings.Join(patterns, ","),
		CheckKeysBatchSize: collectors.DefaultBatchSize,
		ConnectionTimeouts: 5 * time.Minute,
		Registry:           reg,
	}); err != nil {
		return nil, fmt.Errorf("redis_exporter: %w", err)
	}
	return reg, nil
}

// scrapeOurs scans with lock-exporter's engine, checks it saw every lock key and records its
// SCAN calls.
func (c *comparison) scrapeOurs(ctx context.Context) error {
	r := c.ours.Scan(ctx)
	var keys int64
	for _, ns := range r.Namespaces {
		if !ns.Complete {
			return fmt.Errorf("lock-exporter: %s incomplete (%v)", ns.Namespace.Name, r.Err)
		}
		keys += ns.Keys
	}
	if !r.Up || keys != int64(c.res.locks) {
		return fmt.Errorf("lock-exporter: up %v, %d keys (%v), want %d", r.Up, keys, r.Err, c.res.locks)
	}
	c.res.scans3 = r.ScanCalls
	return nil
}

// scrapeTheirs gathers redis_exporter's metrics and checks its redis_keys_count adds up to
// every lock key.
func (c *comparison) scrapeTheirs() error {
	mfs, err := c.theirs.Gather()
	if err != nil {
		return fmt.Errorf("redis_exporter: %w", err)
	}
	var counted float64
	for _, mf := range mfs {
		if mf.GetName() == "redis_keys_count" {
			for _, m := range mf.GetMetric() {
				counted += m.GetGauge().GetValue()
			}
		}
	}
	if int(counted) != c.res.locks {
		return fmt.Errorf("redis_exporter counted %v keys, want %d", counted, c.res.locks)
	}
	return nil
}

// warmUp scrapes each exporter once: connections, first allocations.
func (c *comparison) warmUp(ctx context.Context) error {
	if err := c.scrapeOurs(ctx); err != nil {
		return err
	}
	return c.scrapeTheirs()
}

// turn is one exporter's part of a round: its scrape and where its times go.
type turn struct {
	scrape    func() error
	wall, cpu *[]time.Duration
}

// round times one scrape of each exporter; lock-exporter goes first in even rounds.
func (c *comparison) round(ctx context.Context, admin *redis.Client, r int) error {
	turns := []turn{
		{func() error { return c.scrapeOurs(ctx) }, &c.res.oursWall, &c.res.oursCPU},
		{c.scrapeTheirs, &c.res.theirWall, &c.res.theirCPU},
	}
	if r%2 == 1 {
		slices.Reverse(turns)
	}
	for _, t := range turns {
		wall, cpu, err := measure(ctx, admin, t.scrape)
		if err != nil {
			return err
		}
		*t.wall, *t.cpu = append(*t.wall, wall), append(*t.cpu, cpu)
	}
	return nil
}

func (c *comparison) reportRound(progress io.Writer, r, rounds int) {
	res := c.res
	fmt.Fprintf(progress, "  %d locks, round %d/%d: lock-exporter %v (Redis CPU %v), redis_exporter %v (Redis CPU %v)\n",
		res.locks, r+1, rounds, res.oursWall[r].Round(time.Millisecond), res.oursCPU[r].Round(time.Millisecond),
		res.theirWall[r].Round(time.Millisecond), res.theirCPU[r].Round(time.Millisecond))
}

// countScans records the SCAN calls of one scan of all eight namespaces, then scrapes the three
// again, so scans3 comes from a scrape next to it.
func (c *comparison) countScans(ctx context.Context, addr string) error {
	eight, closeEight, err := newLockScanner(addr, 8, c.res.locks)
	if err != nil {
		return err
	}
	defer closeEight()
	c.res.scans8 = eight.Scan(ctx).ScanCalls
	return c.scrapeOurs(ctx)
}

func newLockScanner(addr string, namespaces, locks int) (*collectors.Scanner, func(), error) {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		DisableIdentity: true, PoolSize: collectors.ConnectionsPerNode()})
	opts := collectors.Options{MaxKeys: locks, Timeout: 5 * time.Minute, Logger: slog.New(slog.DiscardHandler)}
	for _, ns := range testkit.MixedKeyspaceNamespaces()[:namespaces] {
		opts.Namespaces = append(opts.Namespaces, collectors.Namespace{Name: ns, Pattern: testkit.MixedKeyspacePattern(ns)})
	}
	s, err := collectors.NewScanner(c, opts)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return s, func() { s.Close(); c.Close() }, nil
}

// measure runs one scrape and returns its wall time and the Redis server's CPU time over it.
func measure(ctx context.Context, admin *redis.Client, scrape func() error) (wall, cpu time.Duration, err error) {
	cpu0, err := testkit.RedisCPU(ctx, admin)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := scrape(); err != nil {
		return 0, 0, err
	}
	wall = time.Since(start)
	cpu1, err := testkit.RedisCPU(ctx, admin)
	return wall, cpu1 - cpu0, err
}

// comparisonMarkdown renders the results as a section of docs/performance.md.
func comparisonMarkdown(results []cmpResult, rounds int, redisVer string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Medians of %d interleaved rounds per size, one redis-server %s, both exporters in one process "+
		"(`go run ./cmd/lockbench -exporter-comparison`, in `bench/`).\n\n", rounds, redisVer)
	b.WriteString("| lock keys + other keys | lock-exporter wall | redis_exporter `--count-keys` wall | wall ratio | lock-exporter Redis CPU | redis_exporter Redis CPU | Redis CPU ratio | SCAN calls, 3 / 8 namespaces | lock-exporter peak heap |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s + %s | %.2f s | %.2f s | %.2f× | %.2f s | %.2f s | %.2f× | %d / %d | %.1f MiB |\n",
			humanCount(r.locks), humanCount(r.locks),
			medianDuration(r.oursWall).Seconds(), medianDuration(r.theirWall).Seconds(), r.wallRatio(),
			medianDuration(r.oursCPU).Seconds(), medianDuration(r.theirCPU).Seconds(), r.cpuRatio(),
			r.scans3, r.scans8, r.peakHeapMiB)
	}
	return b.String()
}

func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}
