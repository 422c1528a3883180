package lease

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Test 6: a fenced write from the older owner is rejected; the newer owner's write applies, and
// the same lease may write again.
func TestFencedWriteRejectsOlderOwner(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		tests := []struct {
			name  string
			steps []string // "a" or "b" writes, in order
			want  []bool   // applied?
			final string
		}{
			{"stale writer after the new owner", []string{"b", "a"}, []bool{true, false}, "from b"},
			{"both in order, then the stale one again", []string{"a", "b", "a"}, []bool{true, true, false}, "from b"},
			{"one lease writes repeatedly", []string{"a", "a", "b", "b"}, []bool{true, true, true, true}, "from b"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnvMode(t, sharedAddr, single)
				n := e.namespace(t, "snapshot", Policy{TTL: 100 * time.Millisecond, DisableRenewal: true, Fencing: true})
				lockKey, dataKey := uniqueKey(t), uniqueKey(t)+":data"
				// A holds the lock, then "pauses" past its TTL; B takes over with a newer fence.
				a, err := n.Acquire(context.Background(), lockKey)
				if err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, 20*time.Second, "A's lease to expire", func() bool { return e.rdb.Exists(context.Background(), lockKey).Val() == 0 })
				b, err := n.Acquire(context.Background(), lockKey)
				if err != nil {
					t.Fatal(err)
				}
				fences := map[string]int64{"a": a.Fence(), "b": b.Fence()}
				var applied, rejected float64
				for i, who := range tc.steps {
					err := n.FencedSet(context.Background(), fences[who], dataKey, "from "+who, time.Minute)
					if got := err == nil; got != tc.want[i] {
						t.Fatalf("step %d (%s, fence %d): err = %v, want applied=%v", i, who, fences[who], err, tc.want[i])
					}
					if err != nil && !errors.Is(err, ErrStaleFence) {
						t.Fatalf("rejection is %v, want ErrStaleFence", err)
					}
					if tc.want[i] {
						applied++
					} else {
						rejected++
					}
				}
				if got := e.rdb.Get(context.Background(), dataKey).Val(); got != tc.final {
					t.Errorf("data = %q, want %q", got, tc.final)
				}
				if got, want := e.rdb.Get(context.Background(), lockkeys.WriteFence(dataKey)).Val(), strconv.FormatInt(b.Fence(), 10); got != want {
					t.Errorf("write fence record = %q, want %s", got, want)
				}
				e.wantMetrics(t, "snapshot", map[string]float64{
					"lock_fenced_writes_total/applied":  applied,
					"lock_fenced_writes_total/rejected": rejected,
				})
				_ = a.Release(context.Background())
				_ = b.Release(context.Background())
			})
		}
	})
}

func TestFencedSetInputAndExpiry(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		e := newEnvMode(t, sharedAddr, single)
		n := e.namespace(t, "snapshot", Policy{Fencing: true})
		ctx := context.Background()
		if err := n.FencedSet(ctx, 0, "k", "v", 0); !errors.Is(err, ErrNoFence) {
			t.Errorf("fence 0: %v", err)
		}
		for _, key := range []string{"", "a}b"} {
			if err := n.FencedSet(ctx, 1, key, "v", 0); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("key %q: %v", key, err)
			}
		}
		key := uniqueKey(t)
		if err := n.FencedSet(ctx, 7, key, "v", 0); err != nil {
			t.Fatal(err)
		}
		if ttl := e.rdb.PTTL(ctx, key).Val(); ttl != -1 {
			t.Errorf("ttl 0 wrote a key with PTTL %s, want none", ttl)
		}
		if err := n.FencedSet(ctx, 7, key, "v", 500*time.Microsecond); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "a sub-millisecond ttl to expire the key", func() bool { return e.rdb.Exists(ctx, key).Val() == 0 })
		if got := e.rdb.Get(ctx, lockkeys.WriteFence(key)).Val(); got != "7" {
			t.Errorf("write fence record = %q, want it kept past the data's expiry", got)
		}
		if err := n.FencedSet(ctx, 6, key, "v", 0); !errors.Is(err, ErrStaleFence) {
			t.Errorf("older fence after expiry of the data: %v, want ErrStaleFence", err)
		}
	})
}

// A fenced namespace refuses lock keys whose fence key could land on another cluster slot.
func TestFencedAcquireRejectsUntaggableKeys(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "scheduler", Policy{Fencing: true})
	for _, key := range []string{"", "a}b", "{}job"} {
		if _, err := n.Acquire(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Acquire(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}
