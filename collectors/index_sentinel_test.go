package collectors

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexSentinelFailover: behind Sentinel the index follows the current master; after a
// failover it resyncs from the new master and serves what a walk of it sees.
func TestIndexSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("a Sentinel failover takes seconds")
	}
	ctx := context.Background()
	master := redistest.Start(t)
	host, port, _ := strings.Cut(master.Addr, ":")
	replica := redistest.Start(t, redistest.WithArgs("--replicaof", host, port))
	sentinel := redistest.StartSentinel(t, master, "locks")
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "locks", SentinelAddrs: []string{sentinel.Addr}})
	t.Cleanup(func() { _ = c.Close() })
	for i := range 20 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(30+i)*time.Second)
	}
	s := indexed(t, c, indexNamespaces[:2])
	compareNow(t, s, c, "build behind Sentinel")

	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel.Addr})
	t.Cleanup(func() { _ = sc.Close() })
	waitFor(t, 30*time.Second, "Sentinel to know the replica", func() bool {
		replicas, err := sc.Replicas(ctx, "locks").Result()
		return err == nil && len(replicas) == 1
	})
	waitFor(t, 10*time.Second, "the replica to be in sync", func() bool {
		info, err := replica.Client(t).Info(ctx, "replication").Result()
		return err == nil && index.InfoField(info, "master_link_status") == "up"
	})
	if err := sc.Failover(ctx, "locks").Err(); err != nil {
		t.Fatal(err)
	}
	replicaPort := strconv.Itoa(replica.Port())
	waitFor(t, 30*time.Second, "the failover", func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, "locks").Result()
		return err == nil && len(addr) == 2 && addr[1] == replicaPort
	})
	waitFor(t, 30*time.Second, "a write on the new master", func() bool {
		return c.Set(ctx, "jobs:after-failover", "t", time.Minute).Err() == nil
	})
	waitFor(t, 30*time.Second, "the index to resync from the new master", func() bool {
		res := s.Scan(ctx)
		var resyncs int64
		for _, n := range res.IndexResyncs {
			resyncs += n
		}
		return resyncs > 0 && res.Up && indexCurrent(s, res)
	})
	compareNow(t, s, c, "failover")
	t.Logf("resyncs %v", s.Scan(ctx).IndexResyncs)
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
