package collectors

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A cluster node that accepts connections but answers nothing (SIGSTOP, a frozen host), and
// serves no slot, must not turn the exporter down: every master answers. go-redis reloads the
// slot map for ForEachMaster from the known nodes in random order, one at a time, under the
// caller's context; a hung node tried first used the whole scrape budget, the reload failed,
// and the scan that followed had no time left: lock_exporter_up 0 on every scrape whose reload
// happened to try a hung node first (4 of 12 scrapes after a paused master failed over, in
// the probe that found it). The test pauses every replica of a 3+3 cluster, so that half the
// nodes hang and a scrape has an even chance of trying one first: before the fix, all of 12
// scrapes up is a 1 in 4,096 chance. The slot map does not change, so a scrape that falls
// back to the map it read last has it right.
func TestClusterHungNodeIsNotDown(t *testing.T) {
	for _, mode := range []ScanMode{ModeWalk, ModeAuto} {
		t.Run(string(mode), func(t *testing.T) {
			cluster := redistest.StartCluster(t, 3, 1)
			cc := redis.NewClusterClient(&redis.ClusterOptions{
				Addrs: cluster.Addrs(), ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true,
			})
			t.Cleanup(func() { _ = cc.Close() })
			ctx := context.Background()
			const n = 60
			for i := range n {
				if err := cc.Set(ctx, fmt.Sprintf("job:%d", i), "x", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
			}
			s := newTestScanner(t, cc, Options{Namespaces: []Namespace{{Name: "job", Pattern: "job:*"}},
				Timeout: 2 * time.Second, Mode: mode})
			if res := scanWithin(t, s, 10*time.Second); !res.Up || res.Namespaces[0].Keys != n {
				t.Fatalf("before the pause: up=%v err=%v", res.Up, res.Err)
			}
			masters := map[*redistest.Server]bool{}
			for _, m := range cluster.Masters(t) {
				masters[m] = true
			}
			for _, node := range cluster.Nodes {
				if masters[node] {
					continue
				}
				node.Pause()
				t.Cleanup(node.Resume)
			}
			// Wait until the masters see the replicas as failed (cluster-node-timeout 1s), so
			// that the slot map no longer lists them: the cluster is settled and healthy.
			deadline := time.Now().Add(30 * time.Second)
			for m := range masters {
				for {
					nodes, _ := m.Do(ctx, "CLUSTER", "NODES")
					if text, _ := nodes.(string); strings.Count(text, "slave,fail ") == len(masters) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s does not see the paused replicas failed", m.Addr)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			var down []string
			for i := range 12 {
				res := scanWithin(t, s, 10*time.Second)
				switch {
				case !res.Up:
					down = append(down, fmt.Sprintf("scrape %d: down: %v", i, res.Err))
				case res.Namespaces[0].Keys != n:
					t.Errorf("scrape %d: %d keys, want %d", i, res.Namespaces[0].Keys, n)
				}
			}
			if len(down) > 0 {
				t.Errorf("%d of 12 scrapes of a healthy cluster (every master answers; the replicas hang) were down:\n%s",
					len(down), strings.Join(down, "\n"))
			}
		})
	}
}
