package collectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// clusterIndexNamespaces are indexNamespaces less the one without a literal prefix ("suffix"):
// every namespace here must be served by the index on a cluster.
var clusterIndexNamespaces = append(indexNamespaces[:4:4], indexNamespaces[5:]...)

func clusterClient(t *testing.T, cluster *redistest.Cluster) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 cluster.Addrs(),
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
	})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// requireIndexed fails unless every namespace of res was served by the index.
func requireIndexed(t *testing.T, res *Result, step string) {
	t.Helper()
	for _, ns := range res.Namespaces {
		if ns.Mode != modeIndex || !ns.Indexed {
			t.Fatalf("after %s: %s read by %s (%s), want the index: %v", step, ns.Namespace.Name, ns.Mode, ns.ModeReason, modes(res))
		}
	}
}

// TestClusterIndexDifferential changes a 3-master, 3-replica cluster's keyspace at random, moves
// slots with their keys between masters, kills tracking connections, fails masters over to their
// replicas (CLUSTER FAILOVER) and kills a master's process (the cluster promotes its replica; the
// killed node comes back as a replica), and after each step checks that every figure the index serves equals a fresh
// walk's, and that the index (not a walk) served it.
func TestClusterIndexDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("bounded-time differential run")
	}
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 1)
	cc := clusterClient(t, cluster)
	seed := newSeeder(t, cc)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 23))
	key := func() string {
		if rng.IntN(4) == 0 {
			return fmt.Sprintf("jobs:deploy:%d", rng.IntN(40))
		}
		return fmt.Sprintf("jobs:%d", rng.IntN(150))
	}
	ttl := func() time.Duration {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return time.Duration(20+rng.IntN(150)) * time.Millisecond // expires during the step
		default:
			// Minutes, not seconds: a key that expires between the index's scrape and the
			// walk after it (a cluster walk takes tens of milliseconds) would be counted by
			// one and not the other. Expiry is covered by the short TTLs, gone before a check.
			return time.Duration(10+rng.IntN(60)) * time.Minute
		}
	}
	for range 150 {
		seed.key(t, key(), ttl(), rng.IntN(300))
	}
	s := indexed(t, cc, clusterIndexNamespaces)
	time.Sleep(200 * time.Millisecond) // the short TTLs have passed: nothing expires mid-check
	requireIndexed(t, waitCurrent(t, s), "build")
	mismatches := compareNow(t, s, cc, "build")

	nodeClients := map[*redistest.Server]*redis.Client{}
	nodeClient := func(srv *redistest.Server) *redis.Client {
		if c, ok := nodeClients[srv]; ok {
			return c
		}
		c := srv.Client(t)
		nodeClients[srv] = c
		return c
	}
	steps := map[string]int{}
	end := time.Now().Add(45 * time.Second)
	for step := 0; time.Now().Before(end); step++ {
		op := "churn"
		switch step % 8 {
		case 2, 6:
			op = "slot-migration"
			k := key()
			cc.Set(ctx, k, "t", time.Minute) // the slot moved holds at least this key
			masters := cluster.Masters(t)
			from := cluster.MasterFor(t, k)
			to := masters[rng.IntN(len(masters))]
			for to == from {
				to = masters[rng.IntN(len(masters))]
			}
			cluster.MigrateSlot(t, cluster.Slot(t, k), to)
		case 4:
			op = "failover"
			var withReplica []*redistest.Server
			for _, m := range cluster.Masters(t) {
				if cluster.HasReplica(m) {
					withReplica = append(withReplica, m)
				}
			}
			cluster.Failover(t, withReplica[rng.IntN(len(withReplica))])
		case 7:
			if step%24 != 15 {
				break
			}
			op = "master-stop"
			var withReplica []*redistest.Server
			for _, m := range cluster.Masters(t) {
				if cluster.HasReplica(m) {
					withReplica = append(withReplica, m)
				}
			}
			cluster.StopMaster(t, withReplica[rng.IntN(len(withReplica))])
		case 5:
			op = "client-kill"
			masters := cluster.Masters(t)
			c := nodeClient(masters[rng.IntN(len(masters))])
			c.Do(ctx, "CLIENT", "KILL", "ID", testkit.TrackingClientID(t, c))
		}
		for range 40 {
			k := key()
			switch rng.IntN(9) {
			case 0, 1:
				cc.Set(ctx, k, "t", ttl())
			case 2:
				seed.key(t, k, ttl(), rng.IntN(600))
			case 3:
				cc.PExpire(ctx, k, time.Duration(10+rng.IntN(60))*time.Minute)
			case 4:
				cc.Persist(ctx, k)
			case 5:
				cc.Del(ctx, k)
			case 6:
				cc.Get(ctx, k) // touches the key: no change-feed message
			case 7:
				// With the acquisition time lease records (for the hold ages) or without.
				holder := fmt.Sprintf("worker-%d", rng.IntN(9))
				if rng.IntN(2) == 0 {
					holder += fmt.Sprintf("\t%d", time.Now().Add(-time.Duration(rng.IntN(600_000))*time.Millisecond).UnixMilli())
				}
				cc.Set(ctx, lockkeys.Holder(k), holder, 0)
				cc.Incr(ctx, lockkeys.Fence(k))
			case 8:
				cc.HSet(ctx, fmt.Sprintf("h:%d", rng.IntN(10)), "owner", "x")
				cc.LPush(ctx, "jobs:list", "x") // a type no namespace counts
			}
		}
		time.Sleep(200 * time.Millisecond) // the short TTLs have passed: nothing expires mid-check
		steps[op]++
		name := fmt.Sprintf("step %d (%s)", step, op)
		if op == "slot-migration" {
			// The scrape right after a move, while the two masters may still resync: those
			// are walked, the others served from their index, and the sum is still exact.
			start := time.Now()
			got := s.Scan(ctx)
			if got.Namespaces[0].Mode == modeWalk {
				steps["walked-a-master-right-after"]++
			}
			for _, d := range differences(got, freshWalk(t, cc, s.opts.Namespaces), time.Since(start)+5*time.Millisecond) {
				t.Errorf("right after %s: %s", name, d)
				mismatches++
			}
		}
		requireIndexed(t, waitCurrent(t, s), name)
		mismatches += compareNow(t, s, cc, name)
	}
	res := s.Scan(ctx)
	t.Logf("steps %v; resyncs %v; mismatches %d", steps, res.IndexResyncs, mismatches)
	if steps["slot-migration"] == 0 || steps["failover"] == 0 || steps["master-stop"] == 0 {
		t.Errorf("steps %v: want at least one slot migration, failover and stopped master", steps)
	}
}
