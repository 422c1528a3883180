package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterResyncWalksOnlyItsMasters moves slots between two masters of a 3-master cluster and
// scrapes right after each move, while the two masters resync: the third master serves from its
// index and receives no SCAN during the scrape (before, any master's resync walked the whole
// cluster for that scrape); the two resyncing masters are walked at most once each during the
// scrape (the scrape waits for their resync's walk rather than walk them beside it); and the
// figures equal a fresh walk's.
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
	s := indexed(t, cc, ns)

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
		cluster.MigrateSlot(t, cluster.Slot(t, k), to)
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
		want := freshWalk(t, cc, ns)
		for _, d := range differences(res, want, time.Since(start)+5*time.Millisecond) {
			t.Errorf("move %d: %s", i, d)
		}
		waitCurrent(t, s)
	}
	if met == 0 {
		t.Fatal("no scrape met a resync's walk in 8 slot moves")
	}
	t.Logf("%d of 8 scrapes met a resync", met)
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
