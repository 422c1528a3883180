package observe

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// redirectCounter counts the ASK and MOVED replies a node client sees.
type redirectCounter struct {
	redishook.PassThrough
	ask, moved *atomic.Int64
}

func (h redirectCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		// go-redis returns an ASK reply from the call without setting it on cmd.
		if _, ok := redis.IsAskError(err); ok {
			h.ask.Add(1)
		}
		if _, ok := redis.IsMovedError(err); ok {
			h.moved.Add(1)
		}
		return err
	}
}

// redirects counts the ASK and MOVED replies the nodes gave one ClusterClient.
type redirects struct{ ask, moved atomic.Int64 }

// observedClusterClient is a ClusterClient on cl whose node clients count their redirects in r,
// closed when the test ends. A reloadInterval of zero keeps go-redis' default.
func observedClusterClient(t *testing.T, cl *redistest.Cluster, reloadInterval time.Duration, r *redirects) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: cl.Addrs(), ContextTimeoutEnabled: true, ClusterStateReloadInterval: reloadInterval,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.OnNewNode(func(c *redis.Client) { c.AddHook(redirectCounter{ask: &r.ask, moved: &r.moved}) })
	return rdb
}

// The hook on a ClusterClient sees each command once, with its final reply, after go-redis has
// followed ASK and MOVED: a lock taken, renewed and released while its slot moves (the key on
// the target, answered ASK by the source) and released after the move by a client whose slot
// map is from before the move (answered MOVED) counts as on a single node. Hooks on the node
// clients (OnNewNode) would see every redirected attempt as a failed one: docs/observe.md says
// to hook the ClusterClient.
//
// The late release has a client of its own because go-redis reloads a ClusterClient's slot map
// in the background after every ASK (and again 200 ms later if more came meanwhile): on a loaded
// machine that reload can land after the move finished, and the release would then go straight
// to the new owner. The late client sends nothing during the move, so it meets no ASK, and its
// reload interval is longer than the test: its first command after the move goes to the source.
func TestClusterClientHookThroughRedirects(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3, 0)
	var moving, late redirects
	rdb := observedClusterClient(t, cl, 0, &moving)
	lateRdb := observedClusterClient(t, cl, time.Hour, &late)
	key := "jobs:{observe-cluster}:1"
	if err := lateRdb.Exists(ctx, key).Err(); err != nil { // loads its slot map now, before the move
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	hook := obs.Hook() // both clients reach the same servers: they share one hook
	rdb.AddHook(hook)
	lateRdb.AddHook(hook)
	release := redis.NewScript(testRelease)
	refresh := redis.NewScript(testRefresh)
	if ok, err := rdb.SetNX(ctx, key, "v1", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	m := cl.SplitSlot(t, cl.Slot(t, key), otherMaster(t, cl, key), key) // the key is on the target: the source answers ASK
	if err := refresh.Run(ctx, rdb, []string{key}, "v1", 10000).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := release.Run(ctx, rdb, []string{key}, "v1").Int(); n != 1 {
		t.Fatalf("release during the move: %d %v", n, err)
	}
	if ok, err := rdb.SetNX(ctx, key, "v2", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire during the move: %v %v", ok, err)
	}
	m.Finish(t)
	if n, err := release.Run(ctx, lateRdb, []string{key}, "v2").Int(); n != 1 {
		t.Fatalf("release after the move: %d %v", n, err)
	}
	if moving.ask.Load() == 0 || late.moved.Load() == 0 {
		t.Fatalf("the nodes answered ASK %d times during the move and MOVED %d times after it: the test needs both",
			moving.ask.Load(), late.moved.Load())
	}
	checkClusterJobs(t, reg)
}

// otherMaster is a master of cl that does not serve key's slot.
func otherMaster(t *testing.T, cl *redistest.Cluster, key string) *redistest.Server {
	t.Helper()
	from := cl.MasterFor(t, key)
	for _, m := range cl.Masters(t) {
		if m != from {
			return m
		}
	}
	t.Fatalf("no master other than %s", from.Addr)
	return nil
}

// checkClusterJobs checks the jobs series of two locks acquired, one renewed, both released.
func checkClusterJobs(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	checkJobs(t, reg,
		jobsValue{"lock_held", "", 0},
		jobsValue{"lock_releases_total", "ok", 2},
		jobsValue{"lock_releases_total", "error", 0},
		jobsValue{"lock_renewals_total", "ok", 1},
		jobsValue{"lock_renewals_total", "failed", 0},
	)
	for o, want := range map[string]uint64{"acquired": 2, "error": 0, "busy": 0} {
		if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", o); n != want {
			t.Errorf("lock_acquire_wait_seconds{outcome=%q} count = %d, want %d", o, n, want)
		}
	}
}
