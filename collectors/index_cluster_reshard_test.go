package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterResyncWalksOnlyItsMasters moves slots between two masters of a 3-master cluster and
// scrapes as soon as both masters' resync builds have begun: the third master serves from its
// index and receives no SCAN during the scrape (before, any master's resync walked the whole
// cluster for that scrape); the two resyncing masters are walked at most once each during the
// scrape (the scrape waits for their resync's walk rather than walk them beside it); and the
// figures equal a fresh walk's.
//
// The scrape starts only once the builds are under way, and its deadline is far beyond any
// build's duration: a scrape rightly walks a resyncing master whose build cannot be expected to
// end before the deadline, or has not begun within resyncGap of the scrape's look (a failed
// build's retry waits longer), and on a loaded machine the feed loop can take longer than
// resyncGap to begin it. That walk is the exporter keeping its deadline, not the doubled walk
// this test guards against.
func TestClusterResyncWalksOnlyItsMasters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves slots")
	}
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := clusterClient(t, cluster)
	masters := cluster.Masters(t)
	clients := map[*redistest.Server]*redis.Client{}
	// Other keys make a resync's walk take long enough for a scrape to meet it.
	for _, m := range masters {
		clients[m] = m.Client(t)
		fillMaster(t, cluster, m, clients[m], 100_000)
	}
	for i := range 300 {
		cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Hour)
	}
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	// One walk's SCAN calls on a master (they hold the same number of keys, give or take the
	// lock keys).
	before := scanCallsOnServer(t, clients[masters[0]])
	freshWalk(t, cc, ns)
	oneWalk := scanCallsOnServer(t, clients[masters[0]]) - before
	s, err := NewScanner(cc, Options{Namespaces: ns, Mode: ModeAuto, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)

	met := 0
	for i := range 8 {
		k := fmt.Sprintf("jobs:%d", i)
		from := cluster.MasterFor(t, k)
		var to, other *redistest.Server
		for _, m := range masters {
			switch {
			case m == from:
			case to == nil:
				to = m
			default:
				other = m
			}
		}
		resyncsBefore := [2]int64{nodeResyncs(clusterNode(t, clusterOf(s), from.Addr)), nodeResyncs(clusterNode(t, clusterOf(s), to.Addr))}
		cluster.MigrateSlot(t, cluster.Slot(t, k), to)
		awaitResyncBuilds(t, s, [2]*redistest.Server{from, to}, resyncsBefore)
		scans := func() [3]int {
			return [3]int{scanCallsOnServer(t, clients[from]), scanCallsOnServer(t, clients[to]), scanCallsOnServer(t, clients[other])}
		}
		before := scans()
		start := time.Now()
		res := s.Scan(ctx)
		after := scans()
		got := res.Namespaces[0]
		t.Logf("move %d: mode %s/%s; SCAN calls during the scrape: from %d, to %d, other %d (one walk: %d)",
			i, got.Mode, got.ModeReason, after[0]-before[0], after[1]-before[1], after[2]-before[2], oneWalk)
		if after[0] > before[0] || after[1] > before[1] {
			met++
		}
		if d := after[2] - before[2]; d != 0 {
			t.Errorf("move %d: the master not involved in the slot move received %d SCAN calls during the scrape", i, d)
		}
		for j := range 2 {
			// A little slack: the walk of a master holding a few more lock keys.
			if d := after[j] - before[j]; d > oneWalk+oneWalk/10 {
				t.Errorf("move %d: a master whose slot moved received %d SCAN calls during the scrape, more than one walk's %d", i, d, oneWalk)
			}
		}
		if !res.Up || !got.Complete {
			t.Errorf("move %d: up %v complete %v err %v: a scrape with a minute's deadline was cut", i, res.Up, got.Complete, got.Err)
		} else {
			for _, d := range differences(res, freshWalk(t, cc, ns), time.Since(start)+5*time.Millisecond) {
				t.Errorf("move %d: %s", i, d)
			}
		}
		waitCurrent(t, s)
	}
	if met == 0 {
		t.Fatal("no scrape met a resync's walk in 8 slot moves")
	}
	t.Logf("%d of 8 scrapes met a resync", met)
}

// awaitResyncBuilds waits until each master of a slot move has begun the build of the resync the
// move causes (or ended it): more resyncs than resyncsBefore, and a build under way or done.
func awaitResyncBuilds(t *testing.T, s *Scanner, masters [2]*redistest.Server, resyncsBefore [2]int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for i, m := range masters {
		n := clusterNode(t, clusterOf(s), m.Addr)
		for !resyncBuildBegun(n, resyncsBefore[i]) {
			if time.Now().After(deadline) {
				t.Fatalf("after 20s the master at %s has not begun its resync build (resyncs %d, before the move %d)",
					m.Addr, nodeResyncs(n), resyncsBefore[i])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// resyncBuildBegun reports whether n resynced since it counted resyncsBefore resyncs and that
// resync's build has begun: a build is under way, or the index is current again.
func resyncBuildBegun(n *index.Node, resyncsBefore int64) bool {
	resyncs, buildBegun := resyncProgress(n)
	return resyncs > resyncsBefore && buildBegun
}

// nodeResyncs is how many resyncs n has begun, for every reason.
func nodeResyncs(n *index.Node) int64 { return sumResyncs(nodeCounts(n).Resyncs) }

func sumResyncs(byReason map[string]int64) int64 {
	var total int64
	for _, c := range byReason {
		total += c
	}
	return total
}

// TestClusterRefusingMasterWalkedAlone: one master of three refuses tracking (its ACL lacks
// client|tracking): every scrape walks that master alone and serves the two others from their
// indexes (no SCAN reaches them), reports the namespace as walked for tracking_refused, and its
// figures equal a fresh walk's. Before, the refusal of one master walked the whole cluster.
func TestClusterRefusingMasterWalkedAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	masters := cluster.Masters(t)
	refusing := masters[1].Client(t)
	if err := refusing.Do(ctx, "ACL", "SETUSER", "default", "-client|tracking").Err(); err != nil {
		t.Fatal(err)
	}
	cc := clusterClient(t, cluster)
	for i := range 300 {
		cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(1+i)*time.Minute)
	}
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	s, err := NewScanner(cc, Options{Namespaces: ns, Mode: ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.Scan(ctx) // waits for the first builds: their walks are not the scrapes' cost
	others := []*redis.Client{masters[0].Client(t), masters[2].Client(t)}
	deadline := time.Now().Add(20 * time.Second)
	for served := 0; served < 3; {
		before := []int{scanCallsOnServer(t, others[0]), scanCallsOnServer(t, others[1])}
		start := time.Now()
		res := s.Scan(ctx)
		got := res.Namespaces[0]
		if !res.Up || got.ModeReason != reasonTrackingRefused || !got.Indexed {
			// The indexes' first builds may still be running.
			if time.Now().After(deadline) {
				t.Fatalf("up %v, mode %s/%s indexed %v: want walk/%s beside the other masters' indexes", res.Up, got.Mode, got.ModeReason, got.Indexed, reasonTrackingRefused)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		served++
		if got.Mode != modeWalk || !got.Complete {
			t.Errorf("mode %s complete %v", got.Mode, got.Complete)
		}
		for i, c := range others {
			if d := scanCallsOnServer(t, c) - before[i]; d != 0 {
				t.Errorf("scrape %d: a master that follows its feed received %d SCAN calls during the scrape (resyncs %v)", served, d, res.IndexResyncs)
			}
		}
		for _, d := range differences(res, freshWalk(t, cc, ns), time.Since(start)+5*time.Millisecond) {
			t.Error(d)
		}
		cc.Set(ctx, fmt.Sprintf("jobs:new:%d", served), "t", 0)
	}
}
