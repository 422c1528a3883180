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

// The hook on a ClusterClient sees each command once, with its final reply, after go-redis has
// followed ASK and MOVED: a lock taken, renewed and released while its slot moves (the key on
// the target, answered ASK by the source) and released after the move (MOVED, for a client
// whose slot map is old) counts as on a single node. Hooks on the node clients (OnNewNode)
// would see every redirected attempt as a failed one: docs/observe.md says to hook the
// ClusterClient.
func TestClusterClientHookThroughRedirects(t *testing.T) {
	ctx := context.Background()
	cl := redistest.StartCluster(t, 3, 0)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	var ask, moved atomic.Int64
	rdb.OnNewNode(func(c *redis.Client) { c.AddHook(redirectCounter{ask: &ask, moved: &moved}) })
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rdb.AddHook(obs.Hook())
	release := redis.NewScript(testRelease)
	refresh := redis.NewScript(testRefresh)
	key := "jobs:{observe-cluster}:1"
	from := cl.MasterFor(t, key)
	var to *redistest.Server
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
		}
	}
	if ok, err := rdb.SetNX(ctx, key, "v1", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	m := cl.SplitSlot(t, cl.Slot(t, key), to, key) // the key is on the target: the source answers ASK
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
	if n, err := release.Run(ctx, rdb, []string{key}, "v2").Int(); n != 1 {
		t.Fatalf("release after the move: %d %v", n, err)
	}
	if ask.Load() == 0 || moved.Load() == 0 {
		t.Fatalf("the nodes answered ASK %d and MOVED %d times: the test needs both", ask.Load(), moved.Load())
	}
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
