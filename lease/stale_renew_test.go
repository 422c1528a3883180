package lease

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// A Renew after a DisableRenewal lease ended at its lapse asks Redis, as Release does, so that
// the stale worker of seed 001 (its key expired and another owner took it) is told "lock not
// owned" and counted as such, per namespace. The key is never extended: the hold has ended.
// When the key still holds the lease's token (Redis's expiry lags the library's lapse by the
// drift margin), the answer is ErrExpired alone, and the attempt still counts not_owned: the
// outcome follows the lease having ended, not which side of the margin Redis happened to be on.
func TestStaleRenewAfterTheLapse(t *testing.T) {
	const ttl = 200 * time.Millisecond
	tests := []struct {
		name string
		// arrange puts the key in the state the stale Renew finds; it returns the token the
		// key must still hold afterwards ("" when the key must be absent).
		arrange      func(t *testing.T, e *env, stale *Lease) string
		failRedis    bool
		wantNotOwned bool
		wantOutcome  string
	}{{
		name: "taken over by a new holder",
		arrange: func(t *testing.T, e *env, stale *Lease) string {
			e.rdb.Del(context.Background(), stale.key) // expired
			// The new holder's own TTL is long, so that its key outlives the test on a slow machine.
			successor := e.namespace(t, "successor", Policy{TTL: time.Minute, Fencing: true, RecordHolder: true})
			next, err := successor.Acquire(context.Background(), stale.key)
			if err != nil {
				t.Fatalf("new holder: %v", err)
			}
			t.Cleanup(func() { _ = next.Release(context.Background()) })
			return next.token
		},
		wantNotOwned: true, wantOutcome: "not_owned",
	}, {
		name: "key gone",
		arrange: func(t *testing.T, e *env, stale *Lease) string {
			e.rdb.Del(context.Background(), stale.key)
			return ""
		},
		wantNotOwned: true, wantOutcome: "not_owned",
	}, {
		name: "key still holds the token (drift margin)",
		arrange: func(t *testing.T, e *env, stale *Lease) string {
			// As if Redis's clock ran slower than this process's: the key outlives the lapse.
			if err := e.rdb.Set(context.Background(), stale.key, stale.token, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			return stale.token
		},
		wantOutcome: "not_owned",
	}, {
		name: "Redis does not answer",
		arrange: func(t *testing.T, e *env, stale *Lease) string {
			if err := e.rdb.Set(context.Background(), stale.key, stale.token, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			return stale.token
		},
		failRedis: true, wantOutcome: "failed",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var armed atomic.Bool
			hook := &faultHook{
				match: func(args []any) bool { return armed.Load() && len(args) > 0 && args[0] == "evalsha" },
				plan:  func(int) (time.Duration, error) { return 0, errInjected },
			}
			e := newEnv(t, sharedAddr, hook)
			n := e.namespace(t, "approval", Policy{TTL: ttl, DisableRenewal: true, Fencing: true, RecordHolder: true})
			stale, err := n.Acquire(context.Background(), uniqueKey(t))
			if err != nil {
				t.Fatal(err)
			}
			waitCancelled(t, stale)
			wantToken := tc.arrange(t, e, stale)
			armed.Store(tc.failRedis)

			err = stale.Renew(context.Background())
			armed.Store(false)
			if !errors.Is(err, ErrExpired) {
				t.Errorf("stale Renew = %v, want ErrExpired", err)
			}
			if got := errors.Is(err, ErrNotOwned); got != tc.wantNotOwned {
				t.Errorf("stale Renew = %v: errors.Is(err, ErrNotOwned) = %v, want %v", err, got, tc.wantNotOwned)
			}
			if tc.failRedis && !errors.Is(err, errInjected) {
				t.Errorf("stale Renew = %v, want Redis's error wrapped", err)
			}
			want := map[string]float64{"lock_held": 0, "lock_renewals_total/ok": 0, "lock_renewals_total/not_owned": 0, "lock_renewals_total/failed": 0}
			want["lock_renewals_total/"+tc.wantOutcome] = 1
			e.wantMetrics(t, "approval", want)
			if got := e.rdb.Get(context.Background(), stale.key).Val(); got != wantToken {
				t.Errorf("the stale Renew changed the key's value")
			}
			// Every key arranged to hold a value lives a minute; a renew would have cut it to ttl.
			if pttl := e.rdb.PTTL(context.Background(), stale.key).Val(); wantToken != "" && pttl <= ttl {
				t.Errorf("key PTTL %v after the stale Renew, want the minute it was given: the key was renewed", pttl)
			}
		})
	}
}
