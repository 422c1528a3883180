package collectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// backstopScanner is an indexed Scanner whose backstop walk the test runs by hand, fast.
func backstopScanner(t *testing.T, c *redis.Client) *Scanner {
	t.Helper()
	s, err := NewScanner(c, Options{Namespaces: indexNamespaces, Mode: ModeAuto, BatchSize: 50, recordHoldAgesOnly: true,
		BackstopKeysPerSecond: 5000, BackstopEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	return s
}

func corrections(s *Scanner) (int64, int64) {
	s.index.node.mu.Lock()
	defer s.index.node.mu.Unlock()
	return s.index.node.corrections, s.index.node.backstops
}

// TestIndexBackstopCorrectsDrift: entries the feed could have missed (a key lost, a key that is
// gone, a wrong expiry, a lost fence key) are corrected and counted by one backstop walk.
func TestIndexBackstopCorrectsDrift(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	for i := range 300 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(60+i)*time.Second)
		c.Set(ctx, fmt.Sprintf("other:%d", i), "x", 0)
	}
	c.Incr(ctx, lockkeys.Fence("jobs:1"))
	s := backstopScanner(t, c)
	n := s.index.node

	n.syncMu.Lock()
	n.idx.remove("jobs:7")                                     // missed: a new key
	n.idx.set("jobs:ghost", index.Entry{Mask: 1, ExpireAt: 0}) // missed: a deletion
	e, _ := n.idx.get("jobs:8")
	e.ExpireAt += 5000 // missed: a renewal
	n.idx.set("jobs:8", e)
	n.idx.remove(lockkeys.Fence("jobs:1")) // missed: a fence key
	n.syncMu.Unlock()
	if got := compareQuiet(t, s, c); got == 0 {
		t.Fatal("the injected drift does not show: the test cannot fail")
	}
	n.backstop(ctx)
	fixed, walks := corrections(s)
	if fixed != 4 || walks != 1 {
		t.Fatalf("backstop: %d corrections in %d walks, want 4 in 1", fixed, walks)
	}
	compareNow(t, s, c, "backstop")
	res := s.Scan(ctx)
	if res.IndexCorrections != 4 {
		t.Errorf("Result.IndexCorrections %d, want 4", res.IndexCorrections)
	}
}

// compareQuiet counts the differences between the index and a walk without failing the test.
func compareQuiet(t *testing.T, s *Scanner, c *redis.Client) int {
	t.Helper()
	got := s.Scan(context.Background())
	want := freshWalk(t, c, s.opts.Namespaces)
	return len(differences(got, want, time.Second))
}

// TestIndexBackstopNoFalseCorrections: keys changing while the backstop walks past them are
// the feed's, not corrections.
func TestIndexBackstopNoFalseCorrections(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	for i := range 2000 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(60+i%100)*time.Second)
	}
	s := backstopScanner(t, c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(2, 3))
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprintf("jobs:%d", rng.IntN(2500))
			switch rng.IntN(4) {
			case 0:
				c.Del(ctx, k)
			case 1:
				c.Set(ctx, k, "t", time.Minute)
			case 2:
				c.PExpire(ctx, k, time.Duration(30+rng.IntN(60))*time.Second)
			case 3:
				c.Incr(ctx, lockkeys.Fence(k))
			}
		}
	})
	s.index.node.backstop(ctx)
	close(stop)
	wg.Wait()
	fixed, walks := corrections(s)
	if fixed != 0 || walks != 1 {
		t.Fatalf("backstop under churn: %d corrections in %d walks, want 0 in 1", fixed, walks)
	}
	compareNow(t, s, c, "backstop under churn")
}
