package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestLifecycleAbandonedSlotMove: on each feed, locks held in one slot are MIGRATEd to another
// master and back (a move an operator abandoned: the slot map never changes, so no resync
// follows), the keys coming back at once or only after the move wait has passed. While keys
// move lifecycle_following reads 0; nothing is counted for the keys leaving and coming back;
// once the move wait has passed the namespace is followed again, and the releases after it are
// counted exactly. Before, the keys' departure counted as deleted ends and, on tracking, each
// arrival as an acquisition, while lifecycle_following read 1.
func TestLifecycleAbandonedSlotMove(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and moves a slot")
	}
	for _, feed := range []FeedSource{FeedTracking, FeedNotifications} {
		for _, late := range []bool{false, true} {
			name := string(feed) + "/abandoned at once"
			if late {
				name = string(feed) + "/abandoned after the move wait"
			}
			t.Run(name, func(t *testing.T) { abandonedSlotMove(t, feed, late) })
		}
	}
}

// moveWaitForTests is the move wait of TestLifecycleAbandonedSlotMove: how long a master stops
// counting after a move's last redirected re-read.
const moveWaitForTests = 3 * time.Second

func abandonedSlotMove(t *testing.T, feed FeedSource, late bool) {
	ctx := context.Background()
	cluster := redistest.StartCluster(t, 3, 0)
	for _, n := range cluster.Nodes {
		if _, err := n.Do(ctx, "CONFIG", "SET", "notify-keyspace-events", "KEA"); err != nil {
			t.Fatal(err)
		}
	}
	cc := clusterClient(t, cluster)
	const locks = 5
	keys := make([]string, locks)
	for i := range keys {
		keys[i] = fmt.Sprintf("jobs:{moving}:%d", i)
	}
	s, err := NewScanner(cc, Options{Namespaces: lifecycleNamespaces[:1], Mode: ModeAuto, Feed: feed, moveWaitMax: moveWaitForTests})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	for _, k := range keys {
		if ok, err := cc.SetNX(ctx, k, "tok-"+k, 5*time.Minute).Result(); err != nil || !ok {
			t.Fatalf("SET NX %s: %v %v", k, ok, err)
		}
	}
	held := life{acq: locks, ends: ends()}
	awaitLifecycle(t, s, "the acquisitions", func(l life) bool { return l.following == 1 && l.counts() == held.counts() })

	move := cluster.BeginSlotMigration(t, cluster.Slot(t, keys[0]), otherMasterThan(t, cluster, cluster.MasterFor(t, keys[0])))
	awaitLifecycle(t, s, "following 0 while the keys move", func(l life) bool { return l.following == 0 })
	if late {
		awaitLifecycle(t, s, "following again after the move wait", func(l life) bool { return l.following == 1 })
	}
	move.Abandon(t)
	// Each scrape drains every master's feed first: every scrape from now on has read the keys
	// that came back.
	got := awaitLifecycle(t, s, "following after the keys came back", func(l life) bool { return l.following == 1 })
	if got.counts() != held.counts() {
		t.Errorf("after the keys left and came back: %s\nwant %s: a migrated key is neither an end nor an acquisition", got.counts(), held.counts())
	}

	for _, k := range keys {
		cc.Del(ctx, k)
	}
	// A hold that came back is observed in the duration histogram where its beginning came back
	// with it (the tracking feed's departed holds), not where it restarted unknown ("restore").
	released := func(l life) bool {
		return l.holds <= locks && l.counts() == life{acq: locks, holds: l.holds, ends: ends("deleted", locks)}.counts()
	}
	awaitLifecycle(t, s, "the releases after the move", released)
}

// otherMasterThan is a master of cluster other than m.
func otherMasterThan(t *testing.T, cluster *redistest.Cluster, m *redistest.Server) *redistest.Server {
	t.Helper()
	for _, o := range cluster.Masters(t) {
		if o != m {
			return o
		}
	}
	t.Fatal("the cluster has one master")
	return nil
}

// awaitLifecycle scrapes s until the jobs namespace's lifecycle satisfies ok, and returns it.
func awaitLifecycle(t *testing.T, s *Scanner, what string, ok func(life) bool) life {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l := lifecycleOf(t, s)["jobs"]
		if ok(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s, waiting for %s: %s following=%v", what, l.counts(), l.following)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
