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
	c := nodeCounts(nodeOf(s))
	return c.Corrections, c.Backstops
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
	n := nodeOf(s)

	withIndex(n, func(idx *index.KeyIndex) {
		idx.Remove("jobs:7")                                     // missed: a new key
		idx.Set("jobs:ghost", index.Entry{Mask: 1, ExpireAt: 0}) // missed: a deletion
		e, _ := idx.Get("jobs:8")
		e.ExpireAt += 5000 // missed: a renewal
		idx.Set("jobs:8", e)
		idx.Remove(lockkeys.Fence("jobs:1")) // missed: a fence key
	})
	if got := compareQuiet(t, s, c); got == 0 {
		t.Fatal("the injected drift does not show: the test cannot fail")
	}
	runBackstop(ctx, n)
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
	runBackstop(ctx, nodeOf(s))
	close(stop)
	wg.Wait()
	fixed, walks := corrections(s)
	if fixed != 0 || walks != 1 {
		t.Fatalf("backstop under churn: %d corrections in %d walks, want 0 in 1", fixed, walks)
	}
	compareNow(t, s, c, "backstop under churn")
}

// scanSpans is a go-redis hook that records the node's SCAN walks in order: a walk starts with
// the SCAN that sends cursor 0 and ends with the reply that returns cursor 0.
type scanSpans struct {
	mu     sync.Mutex
	starts []time.Time
	ends   []time.Time
}

func (h *scanSpans) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scanSpans) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		sc, ok := cmd.(*redis.ScanCmd)
		if !ok {
			return next(ctx, cmd)
		}
		if fmt.Sprint(cmd.Args()[1]) == "0" {
			h.mu.Lock()
			h.starts = append(h.starts, time.Now())
			h.mu.Unlock()
		}
		err := next(ctx, cmd)
		if _, cursor := sc.Val(); err == nil && cursor == 0 {
			h.mu.Lock()
			h.ends = append(h.ends, time.Now())
			h.mu.Unlock()
		}
		return err
	}
}

func (h *scanSpans) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// reset forgets the walks recorded so far (the index's build).
func (h *scanSpans) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.starts, h.ends = nil, nil
}

// rests returns, for each walk that followed a finished one, the time from that walk's end to
// its own start, and the longest walk recorded.
func (h *scanSpans) rests() (rests []time.Duration, longest time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range min(len(h.starts), len(h.ends)) {
		longest = max(longest, h.ends[i].Sub(h.starts[i]))
		if i+1 < len(h.starts) {
			rests = append(rests, h.starts[i+1].Sub(h.ends[i]))
		}
	}
	return rests, longest
}

// TestIndexBackstopRestsBetweenWalks: the backstop walk rests BackstopEvery from the end of one
// walk to the start of the next, whether a walk takes longer than that or not, so that on a
// keyspace the pace takes longer to walk than BackstopEvery the walk still rests. Only lower
// bounds on the rests are asserted: a loaded machine makes walks and rests longer, never
// shorter.
func TestIndexBackstopRestsBetweenWalks(t *testing.T) {
	tests := []struct {
		name  string
		keys  int
		pace  int           // keys/s
		every time.Duration // BackstopEvery
	}{
		{"walk longer than BackstopEvery", 1500, 1000, 300 * time.Millisecond},
		{"walk shorter than BackstopEvery", 200, 1000, 600 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.Start(t)
			c := srv.Client(t)
			for i := range tt.keys {
				c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Hour)
			}
			spans := &scanSpans{}
			c.AddHook(spans)
			s, err := NewScanner(c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}, Mode: ModeAuto,
				BatchSize: 50, BackstopKeysPerSecond: tt.pace, BackstopEvery: tt.every})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			waitCurrent(t, s)
			spans.reset()
			waitBackstops(t, s, 3)
			rests, longest := spans.rests()
			if len(rests) < 2 {
				t.Fatalf("%d rests between backstop walks recorded, want at least 2", len(rests))
			}
			if tt.keys > tt.pace && longest <= tt.every {
				t.Fatalf("the longest walk took %v, not longer than BackstopEvery %v: the case does not test what it says", longest, tt.every)
			}
			for i, r := range rests {
				if r < tt.every {
					t.Errorf("rest %d between backstop walks: %v from one walk's end to the next one's start, want at least BackstopEvery %v", i+1, r, tt.every)
				}
			}
		})
	}
}

// waitBackstops waits until the index has finished want backstop walks.
func waitBackstops(t *testing.T, s *Scanner, want int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, walks := corrections(s); walks >= want {
			return
		}
		if time.Now().After(deadline) {
			_, walks := corrections(s)
			t.Fatalf("%d backstop walks finished in 2 minutes, want %d", walks, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
