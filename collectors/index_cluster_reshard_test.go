package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterResyncWalksOnlyItsMasters moves slots between two masters of a 3-master cluster and
// scrapes right after each move, while the two masters resync: the scrape walks those two only
// (the third serves from its index and receives no SCAN during the scrape), reports the
// namespace as walked for index_resync, and its figures equal a fresh walk's. Before, any
// master's resync walked the whole cluster for that scrape.
func TestClusterResyncWalksOnlyItsMasters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves slots")
	}
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := clusterClient(t, cluster)
	masters := cluster.Masters(t)
	// Other keys make a resync's walk take long enough for a scrape to meet it.
	for _, m := range masters {
		fillMaster(t, cluster, m, m.Client(t), 100_000)
	}
	for i := range 300 {
		cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Hour)
	}
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	s := indexed(t, cc, ns)

	caught := 0
	for i := 0; i < 20 && caught < 3; i++ {
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
		otherClient := other.Client(t)
		cluster.MigrateSlot(t, cluster.Slot(t, k), to)
		before := scanCallsOnServer(t, otherClient)
		start := time.Now()
		res := s.Scan(ctx)
		scans := scanCallsOnServer(t, otherClient) - before
		got := res.Namespaces[0]
		if got.Mode == modeWalk {
			caught++
			if got.ModeReason != reasonResyncing || !got.Indexed {
				t.Errorf("move %d: mode %s/%s indexed %v, want walk/%s with the third master's index", i, got.Mode, got.ModeReason, got.Indexed, reasonResyncing)
			}
			if scans != 0 {
				t.Errorf("move %d: the master not involved in the slot move received %d SCAN calls during the scrape", i, scans)
			}
			want := freshWalk(t, cc, ns)
			for _, d := range differences(res, want, time.Since(start)+5*time.Millisecond) {
				t.Errorf("move %d: %s", i, d)
			}
		}
		waitCurrent(t, s)
	}
	if caught == 0 {
		t.Fatal("no scrape met a resync after 20 slot moves")
	}
	t.Logf("%d scrapes met a resync", caught)
}
