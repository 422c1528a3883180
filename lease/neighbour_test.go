package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Another client of the same Redis made the lock's fence key something other than a string (a
// hash of its own that happens to have the name). The fenced acquire fails with Redis's
// WRONGTYPE, and it must fail whole: no lock key left behind holding a token that nobody holds
// (it would keep every contender out for a TTL), no holder key.
func TestAcquireWithAForeignFenceKeyTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	neighbour := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    Policy
	}{
		{"fenced", Policy{TTL: 10 * time.Second, Fencing: true}},
		{"fenced with holder", Policy{TTL: 10 * time.Second, Fencing: true, RecordHolder: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, srv.Addr)
			n := e.namespace(t, "neighbour", tc.p)
			key := uniqueKey(t)
			if err := neighbour.HSet(ctx, lockkeys.Fence(key), "owner", "someone else").Err(); err != nil {
				t.Fatal(err)
			}
			_, err := n.TryAcquire(ctx, key)
			if err == nil || errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Fatalf("TryAcquire = %v, want Redis's WRONGTYPE error", err)
			}
			for _, k := range []string{key, lockkeys.Holder(key)} {
				if n, err := neighbour.Exists(ctx, k).Result(); err != nil || n != 0 {
					t.Errorf("%q exists (%d, %v) after the failed acquire: a lock nobody holds", k, n, err)
				}
			}
			if typ := neighbour.Type(ctx, lockkeys.Fence(key)).Val(); typ != "hash" {
				t.Errorf("the neighbour's key is a %q now, want its hash untouched", typ)
			}
			e.wantMetrics(t, "neighbour", map[string]float64{
				"lock_acquire_wait_seconds/error":    1,
				"lock_acquire_wait_seconds/acquired": 0,
				"lock_held":                          0,
			})
		})
	}
}
