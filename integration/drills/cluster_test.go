package drills

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestClusterFailover holds leases on a real 3-master, 3-replica Redis Cluster and kills the
// master of their slot. The replica is promoted (cluster-node-timeout 1000ms). The Abandon lease
// (TTL 6s) is abandoned during the failover without dropping its key; the Continue lease (TTL
// 20s) rides through, renews on the promoted replica and releases cleanly. After the abandoned
// key expires, a new owner gets a newer fence from the replicated counter, and the abandoned
// holder's fenced write is rejected. The exporter, scanning every master as its least-privilege
// ACL user, reports lock_exporter_up 0 while the slot has no master and sees the locks again on
// the promoted replica.
func TestClusterFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	rules := testkit.DocumentedACL(t, aclPassword)
	for _, n := range cl.Nodes {
		testkit.SetACL(t, n, rules) // ACL SETUSER is per node; replicas need it before they are promoted
	}
	a := newAudit(t)
	exporterBinary(t)
	defer checkLeaks(t)()
	ctx := context.Background()
	// go-redis refreshes its slot map on MOVED, or when it is older than
	// ClusterStateReloadInterval (60s by default). A killed master answers nothing, not MOVED, so
	// with the default a lease client keeps sending to the dead node for up to a minute. Lease
	// clients on a cluster want the interval well below their TTL; docs/reliability.md says so.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
		ClusterStateReloadInterval: time.Second})
	defer cc.Close()
	reg := prometheus.NewRegistry()
	logs := &testkit.SyncBuffer{}
	a.watchRegistry("cluster metrics", reg)
	a.watchLogs("cluster log", logs)
	c, err := lease.New(cc, lease.Options{Registerer: reg, Logger: newLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	strictPolicy := lease.Policy{TTL: 6 * time.Second, RenewInterval: 300 * time.Millisecond, RenewTimeout: 250 * time.Millisecond,
		MaxRenewFailures: 2, AcquireTimeout: 8 * time.Second, RetryBackoff: 50 * time.Millisecond, Fencing: true}
	lenientPolicy := lease.Policy{TTL: 20 * time.Second, RenewInterval: 300 * time.Millisecond, RenewTimeout: 250 * time.Millisecond,
		OnRenewFailure: lease.Continue, Fencing: true}
	strict, err := c.Declare("strict", strictPolicy)
	if err != nil {
		t.Fatal(err)
	}
	lenient, err := c.Declare("lenient", lenientPolicy)
	if err != nil {
		t.Fatal(err)
	}
	// One hash tag: both locks, their fences and the data share the slot whose master dies.
	ks, kl, data := "{drill-failover}:job:1", "{drill-failover}:run:1", "{drill-failover}:state"
	ls, err := strict.Acquire(ctx, ks)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := lenient.Acquire(ctx, kl)
	if err != nil {
		t.Fatal(err)
	}
	tokS, tokL := a.learn(t, cc, ks), a.learn(t, cc, kl)
	if err := strict.FencedSet(ctx, ks, ls.Fence(), data, "by the first owner", 0); err != nil {
		t.Fatal(err)
	}

	ex := startExporter(t, a, aclEnv(), nil, "--redis.cluster-addr", strings.Join(cl.Addrs(), ","),
		"--namespace", "strict={drill-failover}:job:*", "--namespace", "lenient={drill-failover}:run:*")
	defer ex.stop()
	exporterSees := func(what string, strictKeys float64) {
		t.Helper()
		testkit.Eventually(t, 15*time.Second, "the exporter to see both namespaces "+what, func() bool {
			s := ex.scrape(t, a, 3*time.Second, "", "")
			ks, _ := s.gauge("lock_keys", "lock_namespace", "strict")
			kl, _ := s.gauge("lock_keys", "lock_namespace", "lenient")
			return s.up(t) == 1 && ks == strictKeys && kl == 1
		})
	}
	exporterSees("before the failover", 1)

	master := cl.MasterFor(t, ks)
	replica := replicaOf(t, cl, master)
	testkit.Eventually(t, 30*time.Second, "both locks to reach the replica", func() bool {
		return readOnlyGet(ctx, replica, ks) == tokS && readOnlyGet(ctx, replica, kl) == tokL
	})

	stalls := testkit.StartStallMeter()
	defer stalls.Stop()
	killedAt := time.Now()
	master.Kill()
	if s := ex.scrape(t, a, 3*time.Second, "", ""); s.up(t) != 0 {
		t.Errorf("exporter scrape with a master down: lock_exporter_up = 1, want 0")
	} else if limit := 3*time.Second + stalls.Slack(0); s.took > limit {
		t.Errorf("exporter scrape with a master down took %s, want within its 3s scrape timeout (limit %s for the stalls seen)", s.took, limit)
	}
	testkit.Eventually(t, 20*time.Second, "the replica to be promoted", func() bool {
		role, err := replica.Do(ctx, "ROLE")
		fields, _ := role.([]any)
		return err == nil && len(fields) > 0 && fields[0] == "master"
	})
	promoted := time.Since(killedAt)
	// The abandoned lock was not dropped: it is still there, on the promoted replica.
	if got, _ := replica.Do(ctx, "GET", ks); got != tokS {
		t.Errorf("the strict lock key was changed or deleted during the failover")
	}
	testkit.Eventually(t, 10*time.Second, "the cluster client to write to the promoted replica", func() bool {
		return cc.Set(ctx, "{drill-failover}:probe", "x", time.Minute).Err() == nil
	})

	select {
	case <-ls.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the Abandon lease survived a failover 30s past the promotion")
	}
	if cause := context.Cause(ls.Context()); cause != lease.ErrAbandoned {
		t.Errorf("Abandon lease cause = %v, want ErrAbandoned", cause)
	}
	exporterSees("after the failover", 1) // the abandoned lock is still there, as it should be
	okBefore := value(t, reg, "lenient", "lock_renewals_total/ok")
	testkit.Eventually(t, 30*time.Second, "the Continue lease to renew on the promoted replica", func() bool {
		return value(t, reg, "lenient", "lock_renewals_total/ok") > okBefore
	})
	if err := ll.Context().Err(); err != nil {
		t.Errorf("the Continue lease's context ended: %v", context.Cause(ll.Context()))
	}
	if err := ll.Release(ctx); err != nil {
		t.Errorf("release of the Continue lease after the failover: %v", err)
	}

	// A new owner waits for the abandoned key to expire, then gets a newer fence and writes;
	// the abandoned holder's write is rejected.
	errAbandoned := ls.Release(ctx)
	a.err("release error", errAbandoned)
	if !errors.Is(errAbandoned, lease.ErrAbandoned) {
		t.Errorf("release of the abandoned lease = %v, want ErrAbandoned", errAbandoned)
	}
	next, err := strict.Acquire(ctx, ks)
	if err != nil {
		t.Fatalf("new owner after the abandoned key expired: %v", err)
	}
	a.learn(t, cc, ks)
	if next.Fence() <= ls.Fence() {
		t.Errorf("fence after the failover = %d, want newer than %d (the counter was replicated)", next.Fence(), ls.Fence())
	}
	if err := strict.FencedSet(ctx, ks, next.Fence(), data, "by the new owner", 0); err != nil {
		t.Fatalf("new owner's write: %v", err)
	}
	stale := strict.FencedSet(ctx, ks, ls.Fence(), data, "by the abandoned owner", 0)
	a.err("stale write error", stale)
	if !errors.Is(stale, lease.ErrStaleFence) {
		t.Errorf("abandoned owner's write = %v, want ErrStaleFence", stale)
	}
	if err := next.Release(ctx); err != nil {
		t.Errorf("release of the new owner: %v", err)
	}

	// Exactly MaxRenewFailures consecutive failures abandoned the lease (its log line says so);
	// a renew that timed out on a starved machine before the kill adds to the total only.
	wantAbandonedAfter(t, logs, "strict", 2)
	wantMetrics(t, "cluster", reg, "strict", map[string]bound{
		"lock_renewals_total/failed":         atLeast(2),
		"lock_abandoned_total":               eq(1),
		"lock_releases_total/skipped":        eq(1),
		"lock_releases_total/ok":             eq(1),
		"lock_acquire_wait_seconds/acquired": eq(2),
		"lock_fenced_writes_total/applied":   eq(2),
		"lock_fenced_writes_total/rejected":  eq(1),
		"lock_held":                          eq(0),
	})
	wantMetrics(t, "cluster", reg, "lenient", map[string]bound{
		"lock_renewals_total/failed":    atLeast(1),
		"lock_renewals_total/not_owned": eq(0),
		"lock_abandoned_total":          eq(0),
		"lock_releases_total/ok":        eq(1),
		"lock_held":                     eq(0),
	})
	t.Logf("failover: replica promoted %s after the master was killed; Continue lease counted %v failed renews and survived",
		promoted.Round(10*time.Millisecond), value(t, reg, "lenient", "lock_renewals_total/failed"))
	ex.stop()
	_ = cc.Close()
}

// replicaOf returns the node that replicates master.
func replicaOf(t *testing.T, cl *redistest.Cluster, master *redistest.Server) *redistest.Server {
	t.Helper()
	for _, n := range cl.Nodes {
		if n == master {
			continue
		}
		role, err := n.Do(context.Background(), "ROLE")
		fields, _ := role.([]any)
		if err == nil && len(fields) >= 3 && fields[0] == "slave" && fields[2] == int64(master.Port()) {
			return n
		}
	}
	t.Fatalf("no replica of %s", master.Addr)
	return nil
}

// readOnlyGet reads key on a replica (READONLY lets a cluster replica serve the read).
func readOnlyGet(ctx context.Context, node *redistest.Server, key string) string {
	c := redis.NewClient(&redis.Options{Addr: node.Addr, MaxRetries: -1})
	defer c.Close()
	conn := c.Conn()
	defer conn.Close()
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		return ""
	}
	return conn.Get(ctx, key).Val()
}
