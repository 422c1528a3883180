package companions

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// getCounter counts the GETs a client sends, by key.
type getCounter struct{ keys []string }

func (h *getCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *getCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *getCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() == "get" {
				h.keys = append(h.keys, c.Args()[1].(string))
			}
		}
		return next(ctx, cmds)
	}
}

// TestRead reads the companions of locks of every shape against a real redis-server: one bound
// for every value, fences only when asked, a missing key is absent rather than an error, and a
// key of the wrong type is an error of that key alone.
func TestRead(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	long := strings.Repeat("h", 3*MaxValueBytes)
	c.Set(ctx, lockkeys.Holder("jobs:1"), "worker-7\t1700000000000", 0)
	c.Set(ctx, lockkeys.Fence("jobs:1"), "42", 0)
	c.Set(ctx, lockkeys.Holder("jobs:long"), long+"\t1700000000000", 0)
	c.Set(ctx, lockkeys.Fence("jobs:long"), long, 0)
	c.HSet(ctx, lockkeys.Holder("jobs:hash"), "f", "v")
	keys := []string{"jobs:1", "jobs:long", "jobs:none", "jobs:hash"}

	tests := []struct {
		name       string
		withFences bool
		want       []Values
		gets       int
	}{
		{"holders only", false, []Values{
			{Holder: "worker-7", HasHolder: true},
			{Holder: long[:MaxValueBytes], HasHolder: true},
			{},
			{},
		}, 4},
		{"with fences", true, []Values{
			{Holder: "worker-7", HasHolder: true, Fence: "42", HasFence: true},
			{Holder: long[:MaxValueBytes], HasHolder: true, Fence: long[:MaxValueBytes], HasFence: true},
			{},
			{},
		}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hook := &getCounter{}
			hooked := redis.NewClient(&redis.Options{Addr: c.Options().Addr})
			hooked.AddHook(hook)
			defer hooked.Close()
			got := Read(ctx, hooked, keys, tt.withFences)
			if len(hook.keys) != tt.gets {
				t.Errorf("sent %d GETs (%q), want %d", len(hook.keys), hook.keys, tt.gets)
			}
			if got[3].HolderErr == nil {
				t.Errorf("holder key of the wrong type: no error")
			}
			got[3].HolderErr = nil
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("%s: got %+v, want %+v", keys[i], got[i], tt.want[i])
				}
			}
		})
	}
}
