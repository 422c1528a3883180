package collectors

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func corrections(s *Scanner) (int64, int64) {
	c := nodeCounts(nodeOf(s))
	return c.Corrections, c.Backstops
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
