package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Test 3: a release with a wrong or empty token fails and the owner's lock survives.
func TestReleaseWithWrongTokenIsNotOwned(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		tests := []struct {
			name         string
			token        string
			want         error
			wantNotOwned float64
		}{
			{"wrong token", "wrong-token", ErrNotOwned, 1},
			{"empty token", "", errEmptyToken, 0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnvMode(t, sharedAddr, single)
				n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second})
				owner, err := n.Acquire(context.Background(), uniqueKey(t))
				if err != nil {
					t.Fatal(err)
				}
				if err := n.release(context.Background(), leaseID{owner.key, tc.token, owner.key, tc.token}, time.Now().Add(time.Second)); !errors.Is(err, tc.want) {
					t.Fatalf("release with %s = %v, want %v", tc.name, err, tc.want)
				}
				if got := e.rdb.Get(context.Background(), owner.key).Val(); got != owner.token {
					t.Fatal("the owner's lock did not survive")
				}
				e.wantMetrics(t, "approval", map[string]float64{"lock_releases_total/not_owned": tc.wantNotOwned, "lock_releases_total/ok": 0})
				if err := owner.Release(context.Background()); err != nil {
					t.Fatalf("owner Release: %v", err)
				}
				e.wantMetrics(t, "approval", map[string]float64{"lock_releases_total/ok": 1})
			})
		}
	})
}

// Test 5: owner A's lease expires, B acquires, A's release fails and B's lock survives.
func TestStaleOwnerCannotReleaseNewOwnersLock(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		for _, fencing := range []bool{false, true} {
			t.Run(map[bool]string{false: "plain", true: "fenced"}[fencing], func(t *testing.T) {
				e := newEnvMode(t, sharedAddr, single)
				n := e.namespace(t, "workflow", Policy{TTL: 100 * time.Millisecond, DisableRenewal: true, Fencing: fencing})
				key := uniqueKey(t)
				a, err := n.Acquire(context.Background(), key)
				if err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, 20*time.Second, "A's lease to expire", func() bool { return e.rdb.Exists(context.Background(), key).Val() == 0 })
				b, err := n.Acquire(context.Background(), key)
				if err != nil {
					t.Fatalf("B acquire: %v", err)
				}
				if fencing && b.Fence() <= a.Fence() {
					t.Errorf("B's fence %d not newer than A's %d", b.Fence(), a.Fence())
				}
				if err := a.Release(context.Background()); !errors.Is(err, ErrNotOwned) {
					t.Fatalf("A's Release = %v, want ErrNotOwned", err)
				}
				if got := e.rdb.Get(context.Background(), key).Val(); got != b.token {
					t.Fatal("B's lock did not survive A's release")
				}
				e.wantMetrics(t, "workflow", map[string]float64{
					"lock_releases_total/not_owned":      1,
					"lock_held":                          1,
					"lock_acquire_wait_seconds/acquired": 2,
				})
				if err := b.Release(context.Background()); err != nil {
					t.Fatalf("B's Release: %v", err)
				}
				e.wantMetrics(t, "workflow", map[string]float64{"lock_releases_total/ok": 1, "lock_held": 0, "lock_held_seconds": 2})
			})
		}
	})
}

// Test 7: HoldUntilExpiry leaves the key after the tick; a second replica cannot acquire until
// it expires.
//
// Causal, not a race with the clock: A's key was set after start, so it lives at least until
// start+TTL, and Redis lets B's SET NX through only after that; every successful attempt of B
// must therefore come back after start+TTL, however late any step ran. Attempts answered
// earlier must be busy, and the busy metric must count exactly the busy answers B saw.
func TestHoldUntilExpiryRotatesOwnershipByExpiry(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		t.Parallel()
		const ttl = 2 * time.Second
		// Redis keeps expiry times in whole milliseconds of its own clock reading.
		const clockSlack = 5 * time.Millisecond
		policy := Policy{TTL: ttl, ReleaseMode: HoldUntilExpiry}
		replicaA, replicaB := newEnvMode(t, sharedAddr, single), newEnvMode(t, sharedAddr, single)
		nsA, nsB := replicaA.namespace(t, "reconciler", policy), replicaB.namespace(t, "reconciler", policy)
		key := uniqueKey(t)

		start := time.Now()
		if err := nsA.Do(context.Background(), key, func(context.Context, int64) error { return nil }); err != nil {
			t.Fatalf("replica A tick: %v", err)
		}
		if replicaA.rdb.Exists(context.Background(), key).Val() != 1 {
			t.Fatal("key deleted after a HoldUntilExpiry tick")
		}
		replicaA.wantMetrics(t, "reconciler", map[string]float64{"lock_releases_total/skipped": 1, "lock_releases_total/ok": 0, "lock_held": 0})

		var b *Lease
		busy := 0
		for giveUp := start.Add(ttl + 10*time.Second); b == nil; {
			l, err := nsB.TryAcquire(context.Background(), key)
			answered := time.Now()
			switch {
			case err == nil:
				if early := start.Add(ttl - clockSlack).Sub(answered); early > 0 {
					t.Fatalf("replica B acquired %s before A's key could expire", early)
				}
				b = l
			case errors.Is(err, ErrBusy):
				busy++
				if answered.After(giveUp) {
					t.Fatalf("replica B still busy %s after A's tick; the key never expired", answered.Sub(start))
				}
				time.Sleep(ttl / 20)
			default:
				t.Fatalf("replica B: %v", err)
			}
		}
		if err := b.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		replicaB.wantMetrics(t, "reconciler", map[string]float64{
			"lock_acquire_wait_seconds/busy":     float64(busy),
			"lock_acquire_wait_seconds/acquired": 1,
			"lock_releases_total/skipped":        1,
		})
		t.Logf("replica B was busy %d times, then acquired %s after A's tick started", busy, time.Since(start).Round(time.Millisecond))
	})
}

// A release that cannot reach Redis is an error, counted as such, and does not hang.
func TestReleaseErrorWhenRedisIsDown(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		e := newEnvMode(t, srv.Addr, single)
		stalls := stallMeter(t)
		n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second, ReleaseTimeout: 300 * time.Millisecond})
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		srv.Pause()
		defer srv.Resume()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := l.Renew(ctx); err == nil || errors.Is(err, ErrNotOwned) {
			t.Fatalf("Renew with Redis paused = %v, want a Redis error", err)
		}
		start := time.Now()
		if err := l.Release(context.Background()); err == nil || errors.Is(err, ErrNotOwned) {
			t.Fatalf("Release with Redis paused = %v, want a Redis error", err)
		}
		if took, slack := time.Since(start), stalls.Slack(callSlack); took > n.policy.ReleaseTimeout+slack {
			t.Errorf("Release took %s despite ReleaseTimeout %s (+ %s slack for the stalls seen)", took, n.policy.ReleaseTimeout, slack)
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_renewals_total/failed": 1, "lock_releases_total/error": 1, "lock_held": 0})
	})
}

// Release and Renew refuse leases that were never acquired, released twice or abandoned.
func TestLeaseStateErrors(t *testing.T) {
	var zero Lease
	if err := zero.Release(context.Background()); !errors.Is(err, errEmptyToken) {
		t.Errorf("zero Lease Release = %v", err)
	}
	if err := zero.Renew(context.Background()); !errors.Is(err, errEmptyToken) {
		t.Errorf("zero Lease Renew = %v", err)
	}
	if zero.Context() == nil {
		t.Error("zero Lease has a nil Context")
	}

	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second, Fencing: true})
	key := uniqueKey(t)
	l, err := n.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key() != key || l.Fence() < 1 {
		t.Errorf("Key, Fence = %q, %d", l.Key(), l.Fence())
	}
	if err := l.Renew(context.Background()); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if pttl := e.rdb.PTTL(context.Background(), key).Val(); pttl < 9*time.Second {
		t.Errorf("PTTL after Renew = %s", pttl)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(l.Context()), ErrReleased) {
		t.Errorf("cause after Release = %v", context.Cause(l.Context()))
	}
	if err := l.Release(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("second Release = %v", err)
	}
	if err := l.Renew(context.Background()); !errors.Is(err, ErrReleased) {
		t.Errorf("Renew after Release = %v", err)
	}
	e.wantMetrics(t, "approval", map[string]float64{"lock_releases_total/ok": 1, "lock_renewals_total/ok": 1})
}
