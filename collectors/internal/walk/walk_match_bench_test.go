package walk

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

var (
	walkMatchOtherKeys = flag.Int("walkmatch.other-keys", 2_000_000, "other keys (DEBUG POPULATE) of BenchmarkWalkMatch")
	walkMatchKeyPrefix = flag.String("walkmatch.other-prefix", "cache", "the other keys' names: PREFIX:N (a longer prefix, longer keys)")
)

// BenchmarkWalkMatch measures what the walk's SCAN MATCH costs Redis on a big shared keyspace
// (-walkmatch.other-keys keys from DEBUG POPULATE, named -walkmatch.other-prefix:N; 10k locks
// under "locks:job:", half of them with fence and holder keys), one whole walk per shape per
// iteration, the shapes in rotated order so that the machine's load falls on all of them alike:
//   - star: "*locks:job:*", a MATCH with a leading star, which Redis tries at every byte of every key;
//   - sets: lockOrCompanionMatch, the MATCH now;
//   - prefix: "locks:job:*", a MATCH of the prefix alone, which misses the companion keys;
//   - two: "locks:job:*" and a second SCAN pass over "{locks:job:*", the other way to find them.
//
// It reports each shape's median Redis CPU per walk (INFO cpu) and its median ratio to star's
// in the same iteration. Run it with:
//
//	go test -run '^$' -bench BenchmarkWalkMatch -benchtime 5x ./collectors/internal/walk -args -walkmatch.other-keys=10000000
func BenchmarkWalkMatch(b *testing.B) {
	srv := redistest.Start(b, redistest.WithArgs("--enable-debug-command", "yes"))
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 10 * time.Minute})
	b.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(ctx, "DEBUG", "POPULATE", *walkMatchOtherKeys, *walkMatchKeyPrefix, 32).Err(); err != nil {
		b.Fatal(err)
	}
	const locks = 10_000
	const batchSize = 1000 // the exporter's default
	pipe := admin.Pipeline()
	for i := range locks {
		k := fmt.Sprintf("locks:job:%d", i)
		pipe.Set(ctx, k, "token", time.Hour)
		if i%2 == 0 {
			pipe.Set(ctx, lockkeys.Fence(k), "1", 0)
			pipe.Set(ctx, lockkeys.Holder(k), "worker pid 7", time.Hour)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DisableIdentity: true, PoolSize: 1 + InspectWorkers})
	b.Cleanup(func() { _ = c.Close() })
	w := NewWalker(ctx, c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "locks:job:*", StringsOnly: true}},
		BatchSize: batchSize, MaxKeys: 100_000, TopK: 5, Timeout: 5 * time.Minute, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(w.Close)
	sets := w.cls.Match
	walk := func(match string) {
		w.cls.Match = match
		res := w.Scan(ctx)
		if ns := res.Namespaces[0]; !res.Up || !ns.Complete || ns.Keys != locks {
			b.Fatalf("walk with MATCH %q: up=%v complete=%v keys=%d err=%v", match, res.Up, ns.Complete, ns.Keys, res.Err)
		}
	}
	shapes := []struct {
		name string
		walk func()
	}{
		{"star", func() { walk("*locks:job:*") }},
		{"sets", func() { walk(sets) }},
		{"prefix", func() { walk("locks:job:*") }},
		{"two", func() {
			walk("locks:job:*")
			for cursor := uint64(0); ; {
				_, next, err := c.ScanType(ctx, cursor, "{locks:job:*", batchSize, TypeString).Result()
				if err != nil {
					b.Fatal(err)
				}
				if cursor = next; cursor == 0 {
					break
				}
			}
		}},
	}
	redisCPU := func() float64 {
		cpu, err := testkit.RedisCPU(ctx, admin)
		if err != nil {
			b.Fatal(err)
		}
		return float64(cpu)
	}
	cpu := make([][]float64, len(shapes))
	round := 0
	for b.Loop() {
		for j := range shapes {
			i := (j + round) % len(shapes)
			cpu0 := redisCPU()
			shapes[i].walk()
			cpu[i] = append(cpu[i], (redisCPU()-cpu0)/1e9)
		}
		b.Logf("round %d: Redis CPU per walk: star %.3f s, sets %.3f s, prefix %.3f s, two %.3f s",
			round, cpu[0][round], cpu[1][round], cpu[2][round], cpu[3][round])
		round++
	}
	for i, sh := range shapes {
		ratios := make([]float64, len(cpu[i]))
		for r := range ratios {
			ratios[r] = cpu[i][r] / cpu[0][r]
		}
		b.ReportMetric(median(cpu[i]), "s-cpu/"+sh.name)
		b.ReportMetric(median(ratios), "x-star/"+sh.name)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
