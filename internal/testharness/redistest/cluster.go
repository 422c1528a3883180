package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterReadyTimeout bounds how long a new cluster may take to agree on its slot map.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a real local Redis Cluster made of redis-server processes.
type Cluster struct {
	// Nodes holds every node, masters first in creation order; replicas follow.
	Nodes []*Server
}

// StartCluster launches masters×(1+replicasPerMaster) cluster-enabled servers, joins them with
// `redis-cli --cluster create`, and waits until every node reports cluster_state:ok.
func StartCluster(tb testing.TB, masters, replicasPerMaster int) *Cluster {
	tb.Helper()
	if masters < 3 {
		tb.Fatalf("redistest: redis-cli --cluster create needs at least 3 masters, got %d", masters)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		tb.Fatal("redis-cli not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-tools) or run bash .ci/run")
	}
	c := &Cluster{}
	total := masters * (1 + replicasPerMaster)
	for i := 0; i < total; i++ {
		c.Nodes = append(c.Nodes, Start(tb, WithArgs(
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000",
			// Let a promoted replica's cluster serve reads and writes for covered slots even
			// while another shard is down, as operators usually configure it.
			"--cluster-require-full-coverage", "no",
		)))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	out, err := exec.Command(cli, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitReady(tb)
	return c
}

// Addrs lists every node's address, for redis.ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// Client returns a cluster client seeded with every node, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// MasterFor returns the node that currently serves key's slot as master.
func (c *Cluster) MasterFor(tb testing.TB, key string) *Server {
	tb.Helper()
	ctx := context.Background()
	slot, err := c.Nodes[0].Do(ctx, "CLUSTER", "KEYSLOT", key)
	if err != nil {
		tb.Fatalf("redistest: CLUSTER KEYSLOT: %v", err)
	}
	for _, n := range c.Nodes {
		if n.running() && n.servesSlot(ctx, slot.(int64)) {
			return n
		}
	}
	tb.Fatalf("redistest: no master serves the slot of %q", key)
	return nil
}

// servesSlot reports whether this node's own CLUSTER SLOTS names it as slot's master.
func (s *Server) servesSlot(ctx context.Context, slot int64) bool {
	reply, err := s.Do(ctx, "CLUSTER", "MYID")
	if err != nil {
		return false
	}
	myID, _ := reply.(string)
	return myID != "" && s.slotOwner(ctx, slot) == myID
}

func (c *Cluster) waitReady(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(clusterReadyTimeout)
	var last string
	for time.Now().Before(deadline) {
		okAll := true
		for _, n := range c.Nodes {
			if !n.running() {
				continue
			}
			info, err := n.Do(ctx, "CLUSTER", "INFO")
			text, _ := info.(string)
			if err != nil || !strings.Contains(text, "cluster_state:ok") {
				okAll = false
				last = fmt.Sprintf("%s: %v %s", n.Addr, err, firstLine(text))
				break
			}
		}
		if okAll {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("redistest: cluster not ready within %s: %s", clusterReadyTimeout, last)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}
