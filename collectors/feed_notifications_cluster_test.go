package collectors

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterFeedNotifications: on a cluster each master's index follows that master's
// keyspace notifications (a node publishes only its own keys' events): every master follows
// them, the index equals a fresh walk after writes on every master, a key's events reach the
// hook in order, and a master whose subscription is killed resyncs alone.
func TestClusterFeedNotifications(t *testing.T) {
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	for _, n := range cluster.Nodes {
		if _, err := n.Do(ctx, "CONFIG", "SET", "notify-keyspace-events", "KEA"); err != nil {
			t.Fatal(err)
		}
	}
	cc := clusterClient(t, cluster)
	for i := range 30 {
		cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Minute)
	}
	log := newEventLog()
	s := indexedFeed(t, cc, clusterIndexNamespaces, FeedNotifications, log)
	requireIndexed(t, waitCurrent(t, s), "build")
	nodes := mastersOf(clusterOf(s))
	if len(nodes) != 3 {
		t.Fatalf("%d masters indexed, want 3", len(nodes))
	}
	for addr, n := range nodes {
		if notifications, following := feedOf(n); !notifications || !following {
			t.Fatalf("master %s: follows %s, following %v; want notifications, true", addr, sourceName(notifications), following)
		}
	}
	for i := range 30 {
		k := fmt.Sprintf("jobs:%d", i)
		switch i % 3 {
		case 0:
			cc.Del(ctx, k)
		case 1:
			cc.PExpire(ctx, k, time.Hour)
		default:
			cc.HSet(ctx, fmt.Sprintf("h:%d", i), "holder", "1")
		}
	}
	_, err := cc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "jobs:multi", "a", 0)
		p.Del(ctx, "jobs:multi")
		p.Set(ctx, "jobs:multi", "b", 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	compareNow(t, s, cc, "writes on every master")
	if got, want := log.of("jobs:multi"), []string{"set", "del", "set"}; !slices.Equal(got, want) {
		t.Fatalf("events of jobs:multi: %v, want %v", got, want)
	}

	master := cluster.MasterFor(t, "jobs:multi")
	if _, err := master.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	cc.Set(ctx, "jobs:multi", "c", time.Minute)
	res := awaitResync(t, s, index.ResyncConnectionLost)
	if got := res.IndexResyncs[index.ResyncConnectionLost]; got != 1 {
		t.Errorf("one master's subscription killed: %d resyncs, want 1", got)
	}
	requireIndexed(t, waitCurrent(t, s), "resync")
	compareNow(t, s, cc, "one master resynced")
}
