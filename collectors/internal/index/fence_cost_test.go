package index

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestIndexFenceExpiryCost measures what reading fence keys' expiries costs the index's build
// and backstop walk: the Redis CPU (INFO cpu) of a walk, of a build and of a backstop walk, in
// interleaved rounds, on 1M other keys (DEBUG POPULATE), 10k lock keys and 10k fence keys. It
// logs the medians and fails if a build or a backstop walk costs Redis more than 1.5 walks. It
// takes a minute or two, so it runs only when asked:
//
//	LOCKWATCH_INDEX_COST=1 go test -count=1 -run TestIndexFenceExpiryCost -v ./collectors/internal/index
func TestIndexFenceExpiryCost(t *testing.T) {
	if os.Getenv("LOCKWATCH_INDEX_COST") == "" {
		t.Skip("set LOCKWATCH_INDEX_COST=1 to measure")
	}
	const (
		others = 1_000_000
		locks  = 10_000
		rounds = 3
	)
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--enable-debug-command", "yes"))
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 10 * time.Minute})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Do(ctx, "DEBUG", "POPULATE", others, "other", 32).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := admin.Pipeline()
	for i := range locks {
		k := fmt.Sprintf("jobs:%d", i)
		pipe.Set(ctx, k, "token", time.Hour)
		pipe.Set(ctx, lockkeys.Fence(k), i, 2*time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := testNodeOptions(nodeTestNamespaces[:1], func(o *Options) {
		backstopByHand(o)
		o.BackstopKeysPerSecond = 10_000_000
		o.Walk.Timeout, o.Scrape.Timeout = time.Minute, time.Minute
	})
	cpu := func(run func()) time.Duration {
		before, err := testkit.RedisCPU(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		run()
		after, err := testkit.RedisCPU(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		return after - before
	}
	var walks, builds, backstops []time.Duration
	for round := range rounds {
		walks = append(walks, cpu(func() {
			w := walk.NewWalker(ctx, srv.Client(t), o.Scrape)
			defer w.Close()
			if res := w.Scan(ctx); res.Namespaces[0].FenceKeys != locks {
				t.Fatalf("walk: %d fence keys, want %d (%v)", res.Namespaces[0].FenceKeys, locks, res.Err)
			}
		}))
		var n *Node
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) { // its cleanup closes the node
			builds = append(builds, cpu(func() { n = startNode(t, srv.Client(t), o) }))
			backstops = append(backstops, cpu(func() { n.backstop(ctx) }))
			if got := n.Counts(); got.Corrections != 0 || got.Backstops != 1 {
				t.Errorf("backstop: %d corrections in %d walks, want 0 in 1", got.Corrections, got.Backstops)
			}
		})
	}
	walked, built, backstopped := medianDuration(walks), medianDuration(builds), medianDuration(backstops)
	t.Logf("Redis CPU, medians of %d rounds: walk %v, build %v (%.2fx), backstop %v (%.2fx); all %v %v %v",
		rounds, walked, built, float64(built)/float64(walked), backstopped, float64(backstopped)/float64(walked), walks, builds, backstops)
	if built > walked*3/2 || backstopped > walked*3/2 {
		t.Errorf("a build or a backstop walk costs Redis more than 1.5 walks")
	}
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
