package collectors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// movingKeys is how many lock keys the slot these tests move holds: a hash tag puts them in one
// slot, beside lock keys spread over the others.
const movingKeys = 20

// slotMoveCluster starts a 3-master cluster with other keys on every master (others each),
// 300 lock keys spread over the slots and movingKeys more in one slot, and returns it with the
// slot's master (from), another master (to), and the key that names the slot.
func slotMoveCluster(t *testing.T, others int) (cluster *redistest.Cluster, cc *redis.ClusterClient, from, to *redistest.Server, key string) {
	t.Helper()
	ctx := context.Background()
	cluster = redistest.StartCluster(t, 3, 0)
	cc = clusterClient(t, cluster)
	masters := cluster.Masters(t)
	if others > 0 {
		for _, m := range masters {
			fillMaster(t, cluster, m, m.Client(t), others)
		}
	}
	for i := range 300 {
		cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Hour)
	}
	for i := range movingKeys {
		cc.Set(ctx, fmt.Sprintf("jobs:{moving}:%d", i), "t", time.Duration(1+i)*time.Minute)
	}
	key = "jobs:{moving}:0"
	from = cluster.MasterFor(t, key)
	to = masters[0]
	if to == from {
		to = masters[1]
	}
	return cluster, cc, from, to, key
}

// denyAsking takes the ASKING command from the default user of each of masters until the test
// ends, as an ACL without the +asking grant does.
func denyAsking(t *testing.T, masters ...*redistest.Server) {
	t.Helper()
	ctx := context.Background()
	for _, m := range masters {
		c := m.Client(t)
		if err := c.Do(ctx, "ACL", "SETUSER", "default", "-asking").Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Do(ctx, "ACL", "SETUSER", "default", "+asking") })
	}
}

// TestInspectDuringSlotMove reads keys of a slot half moved, on each of its two masters: on the
// source, a key that left answers ASK and reads as gone; on the target, a key that arrived
// answers MOVED to a plain read and is read again with ASKING. Before, both replies were key
// errors that failed the key's namespaces.
func TestInspectDuringSlotMove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := context.Background()
	cluster, _, from, to, key := slotMoveCluster(t, 0)
	cluster.BeginSlotMigration(t, cluster.Slot(t, key), to)
	for _, tc := range []struct {
		name   string
		server *redistest.Server
		gone   bool
	}{
		{"source: the key left", from, true},
		{"target: the key arrived", to, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := walk.NewInspector(tc.server.Client(t), new(atomic.Bool), walk.InspectOptions{ExpireTime: true})
			replies, _ := in.Inspect(ctx, []string{key}, true)
			r := replies[0]
			if r.Err != nil || r.Gone != tc.gone {
				t.Fatalf("err %v gone %v: want no error, gone %v", r.Err, r.Gone, tc.gone)
			}
			if !tc.gone && (r.Info.TTL <= 0 || r.Info.TTL > time.Minute || r.Type != TypeString || r.ExpireAt <= 0) {
				t.Errorf("TTL %v type %q expiry %d: want the key's TTL under a minute, string, an expiry", r.Info.TTL, r.Type, r.ExpireAt)
			}
		})
	}
	t.Run("target without ASKING granted", func(t *testing.T) {
		c := to.Client(t)
		denyAsking(t, to)
		in := walk.NewInspector(c, new(atomic.Bool), walk.InspectOptions{})
		replies, _ := in.Inspect(ctx, []string{key}, true)
		var rerr redis.Error
		err := replies[0].Err
		if _, moved := redis.IsMovedError(err); !errors.As(err, &rerr) || !moved || !strings.Contains(err.Error(), "+asking") {
			t.Errorf("err %v: want the MOVED reply, naming the +asking grant", err)
		}
	})
}

// TestClusterWalkDuringSlotMove scrapes while a slot that holds lock keys is half moved (its keys
// on the target, the slot still the source's): the walk succeeds and counts every lock key, and
// the index's scrape reports what the walk does. Before, the walk failed the namespace with the
// target's MOVED reply, at every scrape of a reshard.
func TestClusterWalkDuringSlotMove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves a slot")
	}
	ctx := context.Background()
	cluster, cc, _, to, key := slotMoveCluster(t, 0)
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	s := indexed(t, cc, ns)
	cluster.BeginSlotMigration(t, cluster.Slot(t, key), to)
	walk := freshWalk(t, cc, ns)
	w := walk.Namespaces[0]
	if !walk.Up || w.Err != nil || !w.Complete || w.Keys != 300+movingKeys {
		t.Fatalf("walk: up %v err %v complete %v keys %d: want up, complete, %d keys", walk.Up, w.Err, w.Complete, w.Keys, 300+movingKeys)
	}
	start := time.Now()
	res := s.Scan(ctx)
	g := res.Namespaces[0]
	if !res.Up || g.Err != nil {
		t.Fatalf("index scrape: up %v err %v", res.Up, g.Err)
	}
	for _, d := range differences(res, freshWalk(t, cc, ns), time.Since(start)+5*time.Millisecond) {
		t.Error(d)
	}
}

// TestClusterResyncAwaitsTheMoveEnd begins a slot move (its keys migrated, the slot still marked
// IMPORTING and MIGRATING), holds it so for a while, and only then ends it. Neither master is
// walked while the slot moves, and each resyncs once, with one walk, after the move ended:
//   - the source's feed follows the keys as they leave (a re-read answers ASK: gone);
//   - with ASKING granted, the target's feed follows them as they arrive; without it, a re-read
//     on the target is redirected, and the target waits for the move's end to resync.
//
// Before, a master resynced as soon as a re-read was redirected, walked while the slot was still
// moving, and walked again when its slots changed: two walks per master per move (three resyncs
// in one of six reshard scrapes of TestClusterResyncWalksOnlyItsMasters beside two CPU hogs).
func TestClusterResyncAwaitsTheMoveEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves a slot")
	}
	for _, asking := range []bool{true, false} {
		t.Run(fmt.Sprintf("asking granted %v", asking), func(t *testing.T) {
			cluster, cc, from, to, key := slotMoveCluster(t, 50_000)
			if !asking {
				denyAsking(t, cluster.Masters(t)...)
			}
			clients := map[*redistest.Server]*redis.Client{from: from.Client(t), to: to.Client(t)}
			ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
			before := scanCallsOnServer(t, clients[from])
			freshWalk(t, cc, ns)
			oneWalk := scanCallsOnServer(t, clients[from]) - before
			s := indexed(t, cc, ns)
			movedResyncs := func() int64 { return clusterCounts(clusterOf(s)).Resyncs[index.ResyncSlotsMoved] }
			entries := func(m *redistest.Server) int { return nodeCounts(clusterNode(t, clusterOf(s), m.Addr)).Entries }
			scans := func() [2]int { return [2]int{scanCallsOnServer(t, clients[from]), scanCallsOnServer(t, clients[to])} }
			resyncsBefore, scansBefore := movedResyncs(), scans()
			entriesBefore := [2]int{entries(from), entries(to)}
			noticed := func() bool { // the move, by both masters
				if entries(from) != entriesBefore[0]-movingKeys {
					return false // the keys that left are not yet out of the source's index
				}
				if asking {
					return entries(to) == entriesBefore[1]+movingKeys
				}
				return movedResyncs() >= resyncsBefore+1 // the target's re-read was redirected
			}

			move := cluster.BeginSlotMigration(t, cluster.Slot(t, key), to)
			deadline := time.Now().Add(20 * time.Second)
			for !noticed() {
				if time.Now().After(deadline) {
					t.Fatalf("after 20s: entries %d, %d (before %d), %d slots_moved resyncs since the move began: the masters did not notice it",
						entries(from), entries(to), entriesBefore, movedResyncs()-resyncsBefore)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Time for a resync that does not wait for the move's end to walk the source, as it
			// did before: up to a whole walk's SCAN calls, or 5s.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if scans()[0]-scansBefore[0] >= oneWalk {
					break
				}
			}
			if d := scans(); d != scansBefore {
				t.Errorf("SCAN calls while the slot was moving: source %d, target %d; want none", d[0]-scansBefore[0], d[1]-scansBefore[1])
			}
			move.Finish(t)
			deadline = time.Now().Add(20 * time.Second)
			for !allNodesCurrent(clusterOf(s)) || movedResyncs() < resyncsBefore+2 {
				if time.Now().After(deadline) {
					t.Fatalf("20s after the move ended: indexes current %v, %d slots_moved resyncs", allNodesCurrent(clusterOf(s)), movedResyncs()-resyncsBefore)
				}
				time.Sleep(10 * time.Millisecond)
			}
			after := scans()
			for i, name := range []string{"source", "target"} {
				// A little slack: the walk of a master holding a few more lock keys.
				if d := after[i] - scansBefore[i]; d > oneWalk+oneWalk/10 {
					t.Errorf("the %s master received %d SCAN calls for the move, more than one walk's %d", name, d, oneWalk)
				}
			}
			if got := movedResyncs() - resyncsBefore; got != 2 {
				t.Errorf("%d slots_moved resyncs for one move: want 2, one per master", got)
			}
			matchesFreshWalk(t, s, cc, ns)
		})
	}
}

// allNodesCurrent reports whether every master's index follows its feed.
func allNodesCurrent(ci *index.Cluster) bool {
	nodes := mastersOf(ci)
	for _, n := range nodes {
		if !nodeCurrent(n) {
			return false
		}
	}
	return len(nodes) > 0
}

// clusterNode is the index of the master at addr.
func clusterNode(t *testing.T, ci *index.Cluster, addr string) *index.Node {
	t.Helper()
	nodes := mastersOf(ci)
	n := nodes[addr]
	if n == nil {
		t.Fatalf("no index for the master at %s (masters %v)", addr, slices.Sorted(maps.Keys(nodes)))
	}
	return n
}

// A move an operator abandoned (the keys MIGRATEd back, SETSLOT STABLE on both masters) never
// changes the slot map, which is what a master whose re-read was redirected waits for
// (awaitMoveEnd). The wait is bounded: after Options.moveWaitMax the master builds anyway and
// its index is current again, and equal to a fresh walk; without the bound it would stay
// closed, and the master walked on every scrape, until the Scanner closed.
func TestClusterResyncAfterAnAbandonedMove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves a slot")
	}
	cluster, cc, _, to, key := slotMoveCluster(t, 5_000)
	// Without ASKING the target's re-read of an arriving key is redirected (MOVED), and the
	// target waits for the move to end.
	denyAsking(t, cluster.Masters(t)...)
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	const waitMax = 2 * time.Second
	s, err := NewScanner(cc, Options{Namespaces: ns, Mode: ModeAuto, moveWaitMax: waitMax})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	movedResyncs := func() int64 { return clusterCounts(clusterOf(s)).Resyncs[index.ResyncSlotsMoved] }
	before := movedResyncs()

	move := cluster.BeginSlotMigration(t, cluster.Slot(t, key), to)
	deadline := time.Now().Add(20 * time.Second)
	for movedResyncs() == before {
		if time.Now().After(deadline) {
			t.Fatal("after 20s the target had not resynced on the keys arriving mid-move")
		}
		time.Sleep(10 * time.Millisecond)
	}
	waiting := time.Now()
	move.Abandon(t)

	deadline = time.Now().Add(waitMax + 20*time.Second)
	for !allNodesCurrent(clusterOf(s)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s after the move was abandoned the masters' indexes are not current: the wait for the move's end is not bounded by %s", time.Since(waiting), waitMax)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("indexes current %s after the target began to wait", time.Since(waiting).Round(time.Millisecond))
	if got := movedResyncs() - before; got != 1 {
		t.Errorf("%d slots_moved resyncs for the abandoned move: want 1, the target's", got)
	}
	matchesFreshWalk(t, s, cc, ns)
}
