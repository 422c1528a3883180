package drills

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestFencesRiseAcrossLostFailover: a cluster failover that loses the latest acquisition (its
// lock and fence-key writes never reached the replica) still hands the next owner a newer
// fence. The replica is frozen while the last owner acquires, so it is promoted holding only
// the previous fence; an INCR counter would then give the next owner the lost owner's fence
// again, and the stale owner's writes would pass the guard. The server clock, which moved on
// during the failover, keeps the fence above it.
func TestFencesRiseAcrossLostFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	a := newAudit(t)
	defer checkLeaks(t)()
	ctx := ctxFor(t, 90*time.Second)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		ClusterStateReloadInterval: time.Second})
	defer cc.Close()
	c, err := lease.New(cc, lease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.Declare("jobs", lease.Policy{TTL: time.Minute, DisableRenewal: true, AcquireTimeout: 10 * time.Second,
		RetryBackoff: 50 * time.Millisecond, Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	key := "{drill-fence-failover}:job:1"

	// Two owners in turn; the second's fence key reaches the replica.
	var replicated int64
	for range 2 {
		l, err := ns.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		a.learn(t, cc, key)
		if l.Fence() <= replicated {
			t.Fatalf("fence %d, want above %d", l.Fence(), replicated)
		}
		replicated = l.Fence()
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	master := cl.MasterFor(t, key)
	replica := replicaOf(t, cl, master)
	// A fresh replica's first sync waits out repl-diskless-sync-delay (5s by default).
	testkit.Eventually(t, 30*time.Second, "the fence key to reach the replica", func() bool {
		return readOnlyGet(ctx, replica, lockkeys.Fence(key)) == strconv.FormatInt(replicated, 10)
	})

	// The lost acquisition: the replica is frozen and its replication link cut (writes already
	// in a socket buffer would still arrive after SIGCONT), so only the master sees it.
	replica.Pause()
	if _, err := master.Do(ctx, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		replica.Resume()
		t.Fatalf("cut the replication link: %v", err)
	}
	lost, err := ns.Acquire(ctx, key)
	if err != nil {
		replica.Resume()
		t.Fatal(err)
	}
	a.learn(t, cc, key)
	master.Kill()
	replica.Resume()
	testkit.Eventually(t, 30*time.Second, "the replica to be promoted", func() bool {
		role, err := replica.Do(ctx, "ROLE")
		fields, _ := role.([]any)
		return err == nil && len(fields) > 0 && fields[0] == "master"
	})
	if got := readOnlyGet(ctx, replica, lockkeys.Fence(key)); got == "" {
		t.Fatal("the promoted replica has no fence key: the drill wants the previous fence kept")
	}

	// The client learns the new topology on its own schedule; acquire once it routes the slot to
	// the promoted replica, so that a refused dial to the dead master is not mistaken for the
	// drill's answer.
	testkit.Eventually(t, 30*time.Second, "the client to route the slot to the promoted replica", func() bool {
		cc.ReloadState(ctx)
		node, err := cc.MasterForKey(ctx, key)
		return err == nil && node.Options().Addr == replica.Addr
	})
	next, err := ns.Acquire(ctx, key) // the lost owner's lock went with the old master
	if err != nil {
		t.Fatalf("acquire on the promoted replica: %v", err)
	}
	a.learn(t, cc, key)
	if next.Fence() <= lost.Fence() {
		t.Errorf("fence after the failover = %d, want above the lost owner's %d (the replica had %d)",
			next.Fence(), lost.Fence(), replicated)
	}
	data := "{drill-fence-failover}:state"
	if err := ns.FencedSet(ctx, key, next.Fence(), data, "by the new owner", 0); err != nil {
		t.Fatalf("new owner's write: %v", err)
	}
	stale := ns.FencedSet(ctx, key, lost.Fence(), data, "by the lost owner", 0)
	a.err("stale write error", stale)
	if !errors.Is(stale, lease.ErrStaleFence) {
		t.Errorf("lost owner's write = %v, want ErrStaleFence", stale)
	}
	if pttl := cc.PTTL(ctx, lockkeys.Fence(key)).Val(); pttl <= 0 {
		t.Errorf("fence key on the promoted replica has PTTL %v, want an expiry", pttl)
	}
	if err := lost.Release(ctx); !errors.Is(err, lease.ErrNotOwned) {
		t.Errorf("lost owner's release = %v, want ErrNotOwned", err)
	}
	if err := next.Release(ctx); err != nil {
		t.Errorf("new owner's release: %v", err)
	}
	t.Logf("fences: replicated %d, lost %d, after the failover %d", replicated, lost.Fence(), next.Fence())
	_ = cc.Close()
}
