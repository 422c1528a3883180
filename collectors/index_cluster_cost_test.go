package collectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterIndexCost measures the Redis CPU each master of a 3-master cluster spends per scrape
// interval with the index and with the walk, in interleaved rounds of one run: a keyspace of
// LOCKWATCH_CLUSTER_COST_KEYS other keys (default 1M, spread evenly over the masters) and 10k
// lock keys, 1000 lock operations per interval (new locks, deletes, renewals, PERSISTs), one
// scrape at the end of each interval. No key expires during the run, so that a walk right after
// a scrape must count what it counted. Each interval's CPU (INFO cpu) is compared with an interval
// of the churn alone. It fails if the index's figures differ from a walk's, or if the index
// costs any master more than the walk. It takes a few minutes, so it runs only when asked:
//
//	LOCKWATCH_CLUSTER_COST=1 go test -count=1 -run TestClusterIndexCost -v ./collectors
func TestClusterIndexCost(t *testing.T) {
	const (
		locks    = 10_000
		ops      = 1000
		interval = 10 * time.Second
		rounds   = 2
	)
	ctx := context.Background()
	_, cc, _, nodes := costCluster(t)
	rng := rand.New(rand.NewPCG(1, 23))
	next := 0
	pipe := cc.Pipeline()
	for ; next < locks; next++ {
		pipe.Set(ctx, fmt.Sprintf("jobs:%d", next), "t", time.Duration(1+rng.IntN(10))*time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	churn := func() {
		for burst := range 10 {
			pipe := cc.Pipeline()
			for range ops / 10 {
				k := fmt.Sprintf("jobs:%d", rng.IntN(next))
				switch rng.IntN(4) {
				case 0:
					pipe.Set(ctx, fmt.Sprintf("jobs:%d", next), "t", time.Hour)
					next++
				case 1:
					pipe.Del(ctx, k)
				case 2:
					pipe.PExpire(ctx, k, time.Duration(1+rng.IntN(10))*time.Hour)
				case 3:
					pipe.Persist(ctx, k)
				}
			}
			if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
				t.Fatal(err)
			}
			if burst < 9 {
				time.Sleep(interval / 10)
			}
		}
	}
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	type sample struct {
		cpu   []float64
		wall  time.Duration
		count int64
	}
	results := map[string][]sample{}
	for round := range rounds {
		for _, mode := range []string{"churn", "index", "walk"} {
			var s *Scanner
			var build time.Duration
			switch mode {
			case "index":
				start := time.Now()
				s = indexed(t, cc, ns)
				build = time.Since(start)
			case "walk":
				s = newTestScanner(t, cc, Options{Namespaces: ns, Mode: ModeWalk})
			}
			before := masterCPU(t, nodes)
			churn()
			var smp sample
			if s != nil {
				start := time.Now()
				res := s.Scan(ctx)
				smp.wall = time.Since(start)
				if !res.Up || !res.Namespaces[0].Complete {
					t.Fatalf("%s scrape: up=%v complete=%v err=%v", mode, res.Up, res.Namespaces[0].Complete, res.Err)
				}
				if mode == "index" && !res.Namespaces[0].Indexed {
					t.Fatalf("index scrape served by %s (%s)", res.Namespaces[0].Mode, res.Namespaces[0].ModeReason)
				}
				smp.count = res.Namespaces[0].Keys
			}
			after := masterCPU(t, nodes)
			for i := range after {
				smp.cpu = append(smp.cpu, after[i]-before[i])
			}
			if s != nil {
				if want := freshWalk(t, cc, ns).Namespaces[0].Keys; smp.count != want {
					t.Errorf("round %d %s: %d keys, a walk counts %d", round, mode, smp.count, want)
				}
				s.Close()
			}
			results[mode] = append(results[mode], smp)
			t.Logf("round %d %-5s: Redis CPU per master %s s, scrape %v%s", round, mode, fmtCPU(smp.cpu), smp.wall.Round(time.Millisecond),
				map[bool]string{true: fmt.Sprintf(", build %v (not in the interval)", build.Round(time.Millisecond))}[mode == "index"])
		}
	}
	for i := range nodes {
		var churnCPU, indexCPU, walkCPU float64
		for r := range rounds {
			churnCPU += results["churn"][r].cpu[i] / rounds
			indexCPU += results["index"][r].cpu[i] / rounds
			walkCPU += results["walk"][r].cpu[i] / rounds
		}
		t.Logf("master %d: churn %.3f s; index +%.3f s; walk +%.3f s per interval (means of %d rounds)",
			i, churnCPU, indexCPU-churnCPU, walkCPU-churnCPU, rounds)
		if indexCPU > walkCPU {
			t.Errorf("master %d: the index cost %.3f s of Redis CPU per interval, the walk %.3f s", i, indexCPU, walkCPU)
		}
	}
}

// fillMaster writes n unrelated keys to master m, under a hash tag of a slot m serves.
func fillMaster(t *testing.T, cluster *redistest.Cluster, m *redistest.Server, c *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	tag := ""
	for i := 0; tag == ""; i++ {
		if cluster.MasterFor(t, fmt.Sprintf("{other%d}", i)) == m {
			tag = fmt.Sprintf("{other%d}", i)
		}
	}
	value := strings.Repeat("v", 16)
	for from := 0; from < n; from += 10_000 {
		pipe := c.Pipeline()
		for i := from; i < min(from+10_000, n); i++ {
			pipe.Set(ctx, fmt.Sprintf("%s:cache:%d", tag, i), value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func fmtCPU(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, "/")
}

// costCluster starts the 3-master cluster of the opt-in cost measurements (skipping unless
// LOCKWATCH_CLUSTER_COST is set) with LOCKWATCH_CLUSTER_COST_KEYS other keys (default 1M)
// spread evenly over the masters, and returns it with a cluster client, the masters and a client
// of each.
func costCluster(t *testing.T) (*redistest.Cluster, *redis.ClusterClient, []*redistest.Server, []*redis.Client) {
	t.Helper()
	if os.Getenv("LOCKWATCH_CLUSTER_COST") == "" {
		t.Skip("a measurement of a few minutes: set LOCKWATCH_CLUSTER_COST=1")
	}
	others := 1_000_000
	if v := os.Getenv("LOCKWATCH_CLUSTER_COST_KEYS"); v != "" {
		var err error
		if others, err = strconv.Atoi(v); err != nil {
			t.Fatalf("LOCKWATCH_CLUSTER_COST_KEYS=%q: %v", v, err)
		}
	}
	cluster := redistest.StartCluster(t, 3, 0)
	cc := clusterClient(t, cluster)
	masters := cluster.Masters(t)
	nodes := make([]*redis.Client, len(masters))
	for i, m := range masters {
		nodes[i] = m.Client(t)
		fillMaster(t, cluster, m, nodes[i], others/len(masters))
	}
	return cluster, cc, masters, nodes
}
