package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestClusterReshardCost measures the Redis CPU each master of a 3-master cluster spends while
// slots move between two of them (a resharding), with a scrape after every move, as Prometheus
// scrapes during a resharding: LOCKWATCH_CLUSTER_COST_KEYS other keys (default 1M, spread over
// the masters), 10k lock keys, 10 slot moves between masters 0 and 1 (master 2 takes no part),
// first with the index, then with the walk, in one run. It reports each master's CPU (INFO cpu)
// over the sequence, less the same sequence of moves with no exporter, and the SCAN calls
// master 2 received. It fails if the index walks master 2 or its figures differ from a walk's.
//
//	LOCKWATCH_CLUSTER_COST=1 go test -count=1 -run TestClusterReshardCost -v ./collectors
func TestClusterReshardCost(t *testing.T) {
	const (
		locks = 10_000
		moves = 10
	)
	ctx := context.Background()
	cluster, cc, masters, nodes := costCluster(t)
	pipe := cc.Pipeline()
	for i := range locks {
		pipe.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", 10*time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	next := 0
	// move moves the slot of the next lock key that masters 0 or 1 serve to the other of the two.
	move := func() {
		for ; ; next++ {
			k := fmt.Sprintf("jobs:%d", next)
			switch cluster.MasterFor(t, k) {
			case masters[0]:
				cluster.MigrateSlot(t, cluster.Slot(t, k), masters[1])
			case masters[1]:
				cluster.MigrateSlot(t, cluster.Slot(t, k), masters[0])
			default:
				continue
			}
			next++
			return
		}
	}
	for _, mode := range []string{"moves alone", "index", "walk"} {
		var s *Scanner
		switch mode {
		case "index":
			s = indexed(t, cc, ns)
		case "walk":
			s = newTestScanner(t, cc, Options{Namespaces: ns, Mode: ModeWalk})
		}
		before, scansBefore := masterCPU(t, nodes), scanCallsOnServer(t, nodes[2])
		walked := 0
		var wall time.Duration
		for range moves {
			move()
			if s == nil {
				continue
			}
			start := time.Now()
			res := s.Scan(ctx)
			wall += time.Since(start)
			if !res.Up || !res.Namespaces[0].Complete {
				t.Fatalf("%s scrape: up=%v complete=%v err=%v", mode, res.Up, res.Namespaces[0].Complete, res.Err)
			}
			if res.Namespaces[0].Mode == modeWalk {
				walked++
			}
		}
		if s != nil {
			// Let the last resyncs end inside the measured sequence: they are the moves' cost.
			if mode == "index" {
				waitCurrent(t, s)
			}
		}
		after, scans := masterCPU(t, nodes), scanCallsOnServer(t, nodes[2])-scansBefore
		cpu := make([]float64, len(after))
		for i := range after {
			cpu[i] = after[i] - before[i]
		}
		t.Logf("%-11s: Redis CPU per master %s s over %d slot moves; %d scrapes walked (some master); scrape wall %v in all; master 2 received %d SCAN calls",
			mode, fmtCPU(cpu), moves, walked, wall.Round(time.Millisecond), scans)
		if s != nil {
			if got, want := s.Scan(ctx).Namespaces[0].Keys, freshWalk(t, cc, ns).Namespaces[0].Keys; got != want {
				t.Errorf("%s: %d keys, a walk counts %d", mode, got, want)
			}
			if mode == "index" && scans != 0 {
				t.Errorf("index: master 2, not involved in the moves, received %d SCAN calls", scans)
			}
			s.Close()
		}
	}
}

// masterCPU is each node's CPU time (testkit.RedisCPU), in seconds.
func masterCPU(t *testing.T, nodes []*redis.Client) []float64 {
	t.Helper()
	out := make([]float64, len(nodes))
	for i, c := range nodes {
		cpu, err := testkit.RedisCPU(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = cpu.Seconds()
	}
	return out
}
