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

// pipelinedKeys is a go-redis hook that records the keys named by the commands of every
// pipeline (the index's re-reads are pipelines; the test's own writes are single commands).
type pipelinedKeys struct {
	mu   sync.Mutex
	keys map[string]int
}

func (h *pipelinedKeys) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipelinedKeys) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *pipelinedKeys) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		for _, cmd := range cmds {
			for _, a := range cmd.Args()[1:] {
				if k, ok := a.(string); ok {
					h.keys[k]++
				}
			}
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *pipelinedKeys) reads(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.keys[key]
}

// TestIndexRereadSkipsKeysTheFeedSaysAreGone: a keyspace-notifications drain sends no command
// for a key whose last event is its removal (del, expired): the feed already says it is gone.
// A key removed and written again in the same drain is still read, and the index and the
// lifecycle come out as a walk and the events say.
func TestIndexRereadSkipsKeysTheFeedSaysAreGone(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	c := srv.Client(t)
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	for i := range 30 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Hour)
	}
	s, err := NewScanner(c, Options{Namespaces: ns, Mode: ModeAuto, Feed: FeedNotifications})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	seen := &pipelinedKeys{keys: map[string]int{}}
	c.AddHook(seen)

	tests := []struct {
		key      string
		act      func(key string)
		wantRead bool
	}{
		{"jobs:0", func(k string) { c.Del(ctx, k) }, false},
		{"jobs:1", func(k string) { c.Unlink(ctx, k) }, false},
		{"jobs:2", func(k string) { c.PExpire(ctx, k, time.Millisecond); awaitGone(t, c, k) }, false},
		{"jobs:3", func(k string) { c.PExpire(ctx, k, 2*time.Hour) }, true},
		{"jobs:4", func(k string) {
			_, _ = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Del(ctx, k)
				p.Set(ctx, k, "u", time.Hour)
				return nil
			})
		}, true},
		{"jobs:new", func(k string) { c.Set(ctx, k, "t", time.Hour) }, true},
	}
	for _, tt := range tests {
		tt.act(tt.key)
	}
	compareNow(t, s, c, "the changes")
	for _, tt := range tests {
		if got := seen.reads(tt.key) > 0; got != tt.wantRead {
			t.Errorf("%s: re-read %v (%d commands), want %v", tt.key, got, seen.reads(tt.key), tt.wantRead)
		}
	}
	// Acquisitions and ends come from the events whether or not the key was read.
	got := lifecycleOf(t, s)["jobs"]
	want := life{acq: 2, renewals: got.renewals, ends: ends("deleted", 3, "expired", 1)}
	if got.counts() != want.counts() {
		t.Errorf("lifecycle: %s\nwant       %s", got.counts(), want.counts())
	}
}
