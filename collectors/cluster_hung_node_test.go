package collectors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
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
//
// What it asserts is the share, not a race: a hung node costs a scrape the reload's quarter of
// its 4 s, and the masters' reads get the three quarters left, room for a loaded machine; a hung
// node that took the whole timeout leaves none, however idle the machine. The test counts the
// reloads' CLUSTER SLOTS sent to a paused node, so it fails if none was tried.
func TestClusterHungNodeIsNotDown(t *testing.T) {
	for _, mode := range []ScanMode{ModeWalk, ModeAuto} {
		t.Run(string(mode), func(t *testing.T) {
			cluster := redistest.StartCluster(t, 3, 1)
			cc := redis.NewClusterClient(&redis.ClusterOptions{
				Addrs: cluster.Addrs(), ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true,
			})
			t.Cleanup(func() { _ = cc.Close() })
			tries := &slotMapReads{paused: map[string]bool{}}
			cc.OnNewNode(func(c *redis.Client) { c.AddHook(slotMapReadHook{reads: tries, addr: c.Options().Addr}) })
			ctx := context.Background()
			const n = 60
			for i := range n {
				if err := cc.Set(ctx, fmt.Sprintf("job:%d", i), "x", time.Hour).Err(); err != nil {
					t.Fatal(err)
				}
			}
			s := newTestScanner(t, cc, Options{Namespaces: []Namespace{{Name: "job", Pattern: "job:*"}},
				Timeout: 4 * time.Second, Mode: mode})
			if res := scanWithin(t, s, 10*time.Second); !res.Up || res.Namespaces[0].Keys != n {
				t.Fatalf("before the pause: up=%v err=%v", res.Up, res.Err)
			}
			tries.pause(pauseAllButMasters(t, cluster))
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
			if tries.count() == 0 {
				t.Error("no reload of the slot map asked a paused node: the scrapes never met a hung node")
			}
		})
	}
}

// pauseAllButMasters pauses every node that serves no slot and waits until every master sees
// them failed (cluster-node-timeout 1s), so that the slot map no longer lists them: the cluster
// is settled and healthy. A paused node is a replica or, where a failover ran during the setup
// on a loaded machine, a master left without a slot. It returns the paused nodes' addresses.
func pauseAllButMasters(t *testing.T, cluster *redistest.Cluster) []string {
	t.Helper()
	masters := map[*redistest.Server]bool{}
	for _, m := range cluster.Masters(t) {
		masters[m] = true
	}
	var paused []string
	for _, node := range cluster.Nodes {
		if !masters[node] {
			node.Pause()
			t.Cleanup(node.Resume)
			paused = append(paused, node.Addr)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for m := range masters {
		for {
			nodes, _ := m.Do(context.Background(), "CLUSTER", "NODES")
			text, _ := nodes.(string)
			if allFailed(text, paused) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not see the paused nodes %v failed:\n%s", m.Addr, paused, text)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return paused
}

// slotMapReads counts the CLUSTER SLOTS commands sent to paused nodes: go-redis's reloads of
// the slot map that met a hung node.
type slotMapReads struct {
	mu     sync.Mutex
	paused map[string]bool
	n      int
}

func (r *slotMapReads) pause(addrs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range addrs {
		r.paused[a] = true
	}
}

func (r *slotMapReads) sent(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused[addr] {
		r.n++
	}
}

func (r *slotMapReads) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// slotMapReadHook is one node client's hook: it reports that node's CLUSTER SLOTS commands.
type slotMapReadHook struct {
	redishook.PassThrough
	reads *slotMapReads
	addr  string
}

func (h slotMapReadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.FullName() == "cluster slots" {
			h.reads.sent(h.addr)
		}
		return next(ctx, cmd)
	}
}

// allFailed reports whether a CLUSTER NODES reply flags every node at addrs "fail" (a majority of
// masters agreed it is down), not merely "fail?".
func allFailed(nodes string, addrs []string) bool {
	failed := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		failed[addr] = slices.Contains(strings.Split(f[2], ","), "fail")
	}
	for _, a := range addrs {
		if !failed[a] {
			return false
		}
	}
	return true
}
