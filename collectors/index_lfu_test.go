package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIdleTimeReturnsAfterLFU: maxmemory-policy is a runtime setting. Once the policy is
// switched from LFU back to LRU, idle times come back, in walk and auto mode alike; the index
// remembered the LFU refusal for good, so lock_key_idle_max_seconds (and LockRenewalStalled)
// stayed absent until a restart.
func TestIdleTimeReturnsAfterLFU(t *testing.T) {
	for _, mode := range []ScanMode{ModeWalk, ModeAuto} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.Start(t)
			c := srv.Client(t)
			for i := range 5 {
				c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Minute)
			}
			s, err := NewScanner(c, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if mode == ModeAuto {
				waitCurrent(t, s)
			}
			for _, step := range []struct {
				policy string
				idle   bool
			}{{"allkeys-lfu", false}, {"allkeys-lru", true}} {
				if err := c.ConfigSet(ctx, "maxmemory-policy", step.policy).Err(); err != nil {
					t.Fatal(err)
				}
				c.Set(ctx, "jobs:"+step.policy, "t", time.Minute) // a key written under the policy
				res := s.Scan(ctx)
				ns := res.Namespaces[0]
				if !res.Up || res.IdleTimeAvailable != step.idle || ns.HasIdle != step.idle || ns.Keys != 6+boolInt(step.idle) {
					t.Fatalf("under %s: up=%v idle available %v, namespace has idle %v, %d keys; want idle %v",
						step.policy, res.Up, res.IdleTimeAvailable, ns.HasIdle, ns.Keys, step.idle)
				}
			}
		})
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
