package clients_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// migratingLease is the lease of a lock that lapses while its slot migrates: long enough for
// a loaded machine to begin the move before it ends, short enough to end before the move does.
const migratingLease = 3 * time.Second

// reshardPrefix is the prefix of one client kind's lock keys in TestLifecycleClusterReshard:
// one hash tag for every kind, so that moving one slot moves every lock of the test.
func reshardPrefix(kind clients.Kind) string { return string(kind) + ":{reshard}:" }

// TestLifecycleClusterReshard: on a 3-master Redis Cluster, on each feed, cluster-aware clients
// (redis-py's RedisCluster, Redisson's replay through a go-redis ClusterClient; both follow
// MOVED and ASK) hold, renew, release and lapse locks while the slot of every lock key moves to
// another master and back: once slowly (the keys MIGRATEd, scrapes and lock traffic while the
// slot is still marked moving, then the move finished), once at once. Locks are held across
// both moves, one lapses while its slot is moving, others are taken and released mid-move.
// A migrated key is neither an end nor an acquisition, so no counter may exceed the clients'
// truth, where the counters fall short of it a scrape read lifecycle_following 0, and the holds
// before and after the moves are all counted.
func TestLifecycleClusterReshard(t *testing.T) {
	for _, feed := range []collectors.FeedSource{collectors.FeedTracking, collectors.FeedNotifications} {
		t.Run(string(feed), func(t *testing.T) { underReshard(t, feed) })
	}
}

func underReshard(t *testing.T, feed collectors.FeedSource) {
	cluster := startNotifyingCluster(t)
	seed := cluster.Nodes[0].Addr
	var namespaces []collectors.Namespace
	for _, kind := range clients.ClusterKinds() {
		ns, _ := lockNamespace(kind, reshardPrefix(kind))
		namespaces = append(namespaces, ns)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ContextTimeoutEnabled: true, DisableIdentity: true})
	t.Cleanup(func() { _ = cc.Close() })
	exp := startExporterOn(t, cc, feed, namespaces)
	gap := &gapRecorder{exp: exp, stopped: map[string]bool{}}
	r := clients.NewClusterRunner(t, seed)
	var kinds []faultHolders
	for _, kind := range clients.ClusterKinds() {
		d := clients.StartCluster(t, kind, seed)
		kinds = append(kinds, faultHolders{kind: kind, a: r.Holder(d, string(kind)+"-A"), b: r.Holder(d, string(kind)+"-B"), after: gap.scrape})
	}
	for _, h := range kinds {
		p := reshardPrefix(h.kind)
		h.hold(p + "before")
		h.lapse(r, p+"lapsed-before")
		wantResult(t, "B acquires a lock it holds across both moves", h.b.Acquire(p+"across", longLease), clients.Acquired)
		wantResult(t, "A acquires a lock that lapses mid-move", h.a.Acquire(p+"lapsing", migratingLease), clients.Acquired)
	}
	exp.scrape()

	gap.recording = true
	moveAndBack(t, cluster, gap, func() {
		for _, h := range kinds {
			p := reshardPrefix(h.kind)
			h.b.Extend(p+"across", longLease) // reaches the key on its new master by ASK
			h.after()
			h.hold(p + "during")
			r.WaitGone(clients.RedisKey(h.kind, p+"lapsing"), migratingLease)
			h.after()
		}
	})
	gap.recording = false

	for _, h := range kinds {
		p := reshardPrefix(h.kind)
		h.a.Extend(p+"lapsing", longLease) // the client's verdict on the lock that lapsed mid-move
		h.after()
		h.b.Extend(p+"across", longLease)
		h.after()
		h.b.Release(p + "across")
		h.after()
		h.hold(p + "after")
		h.lapse(r, p+"lapsed-after")
	}
	checkReshard(t, exp.scrape(), gap, r)
}

// moveAndBack moves the slot of every lock key of TestLifecycleClusterReshard to another
// master slowly, running midMove while the slot is still marked moving and scraping once the
// keys have left, then back at once, and waits after each move until the exporter follows
// every namespace again.
func moveAndBack(t *testing.T, cluster *redistest.Cluster, gap *gapRecorder, midMove func()) {
	t.Helper()
	home := cluster.MasterFor(t, reshardPrefix(clients.RedisPy))
	slot := cluster.Slot(t, reshardPrefix(clients.RedisPy))
	move := cluster.BeginSlotMigration(t, slot, otherMaster(t, cluster, home))
	gap.scrape()
	midMove()
	move.Finish(t)
	gap.awaitFollowing(t)
	cluster.MigrateSlot(t, slot, home)
	gap.awaitFollowing(t)
}

// checkReshard checks each cluster client's counters in got against the truth: none above it,
// short of it only where a scrape read lifecycle_following 0, and every hold made outside the
// moves counted.
func checkReshard(t *testing.T, got map[string]lifecycle, gap *gapRecorder, r *clients.Runner) {
	t.Helper()
	if err := r.Truth().Err(); err != nil {
		t.Errorf("the truth is not exact: %v", err)
	}
	for _, kind := range clients.ClusterKinds() {
		t.Run(string(kind), func(t *testing.T) {
			p := clients.RedisKey(kind, reshardPrefix(kind))
			checkFaulted(t, got[string(kind)], gap.stopped[string(kind)], r, p)
			outsideMoves := []string{p + "before", p + "lapsed-before", p + "after", p + "lapsed-after"}
			if short := got[string(kind)].shortOf(fromTruth(truthOfKeys(r, outsideMoves))); len(short) > 0 {
				t.Errorf("the holds before and after the moves are not all counted: %v", short)
			}
		})
	}
}

// truthOfKeys sums the runner's truth over keys.
func truthOfKeys(r *clients.Runner, keys []string) clients.Counts {
	var total clients.Counts
	for _, key := range keys {
		total = total.Add(r.Truth().Counts(key))
	}
	return total
}

// startNotifyingCluster starts a 3-master cluster whose nodes publish the keyspace events the
// notifications feed needs.
func startNotifyingCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	cluster := redistest.StartCluster(t, 3, 0)
	for _, n := range cluster.Nodes {
		if _, err := n.Do(context.Background(), "CONFIG", "SET", "notify-keyspace-events", notifyAll); err != nil {
			t.Fatal(err)
		}
	}
	return cluster
}

// otherMaster is a master of cluster other than m.
func otherMaster(t *testing.T, cluster *redistest.Cluster, m *redistest.Server) *redistest.Server {
	t.Helper()
	for _, o := range cluster.Masters(t) {
		if o != m {
			return o
		}
	}
	t.Fatal("the cluster has one master")
	return nil
}
