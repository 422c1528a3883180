package collectors

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
//	LOCKWATCH_INDEX_COST=1 go test -count=1 -run TestIndexFenceExpiryCost -v ./collectors
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
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
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
	for range rounds {
		walks = append(walks, cpu(func() {
			if res := freshWalk(t, client(t, srv.Addr), ns); res.Namespaces[0].FenceKeys != locks {
				t.Fatalf("walk: %d fence keys, want %d", res.Namespaces[0].FenceKeys, locks)
			}
		}))
		var s *Scanner
		builds = append(builds, cpu(func() {
			var err error
			s, err = NewScanner(client(t, srv.Addr), Options{Namespaces: ns, Mode: ModeAuto, Timeout: time.Minute,
				BackstopKeysPerSecond: 10_000_000, BackstopEvery: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			waitCurrent(t, s)
		}))
		backstops = append(backstops, cpu(func() { runBackstop(ctx, nodeOf(s)) }))
		if fixed, walked := corrections(s); fixed != 0 || walked != 1 {
			t.Errorf("backstop: %d corrections in %d walks, want 0 in 1", fixed, walked)
		}
		s.Close()
	}
	walk, build, backstop := medianDuration(walks), medianDuration(builds), medianDuration(backstops)
	t.Logf("Redis CPU, medians of %d rounds: walk %v, build %v (%.2fx), backstop %v (%.2fx); all %v %v %v",
		rounds, walk, build, float64(build)/float64(walk), backstop, float64(backstop)/float64(walk), walks, builds, backstops)
	if build > walk*3/2 || backstop > walk*3/2 {
		t.Errorf("a build or a backstop walk costs Redis more than 1.5 walks")
	}
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
