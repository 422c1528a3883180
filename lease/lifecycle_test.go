package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Test 10: cancellation, release and abandonment stop the renewer, leaving no goroutine behind.
func TestRenewerStopsWithoutGoroutineLeak(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		tests := []struct {
			name   string
			faulty bool
			end    func(t *testing.T, l *Lease, cancel context.CancelFunc)
		}{
			{"release", false, func(t *testing.T, l *Lease, _ context.CancelFunc) {
				if err := l.Release(context.Background()); err != nil {
					t.Fatal(err)
				}
			}},
			{"parent cancelled", false, func(t *testing.T, l *Lease, cancel context.CancelFunc) {
				cancel()
				<-l.Context().Done()
			}},
			{"abandoned", true, func(t *testing.T, l *Lease, _ context.CancelFunc) {
				<-l.Context().Done()
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := goleak.IgnoreCurrent()
				// Registered first, so it runs after the client's own cleanup closed its pool.
				t.Cleanup(func() { goleak.VerifyNone(t, before) })
				hook := renewHook(tc.faulty)
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "workflow", Policy{TTL: 2 * time.Second, RenewInterval: 20 * time.Millisecond, RenewTimeout: time.Second, MaxRenewFailures: 2})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				l, err := n.Acquire(ctx, uniqueKey(t))
				if err != nil {
					t.Fatal(err)
				}
				renewed := func() float64 {
					return e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", "ok") +
						e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", "failed")
				}
				testkit.Eventually(t, 20*time.Second, "two counted renews", func() bool { return renewed() >= 2 })
				tc.end(t, l, cancel)
				stopped := hook.calls.Load()
				time.Sleep(5 * n.policy.RenewInterval)
				// Renews are serial: one tick may have passed its check just before the end and
				// reach the hook after it (its outcome is not counted); no second one may.
				if got := hook.calls.Load(); got > stopped+1 {
					t.Errorf("renewer kept going: %d renews after it should have stopped at %d", got, stopped)
				}
				if renewed := renewed(); renewed < 2 || renewed > float64(stopped) {
					t.Errorf("renewals counted %v for %d attempts", renewed, stopped)
				}
				_ = l.Release(context.Background())
				e.wantMetrics(t, "workflow", map[string]float64{"lock_held": 0, "lock_held_seconds": 1})
			})
		}
	})
}

func TestDo(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		errWork := errors.New("work failed")
		tests := []struct {
			name    string
			policy  Policy
			faulty  bool
			fn      func(ctx context.Context, fence int64) error
			wantErr []error
			want    map[string]float64
		}{
			{
				name:   "success releases",
				policy: Policy{Fencing: true},
				fn: func(ctx context.Context, fence int64) error {
					if fence < 1 {
						return errors.New("no fence token")
					}
					return nil
				},
				want: map[string]float64{"lock_releases_total/ok": 1},
			},
			{
				name:    "work error is returned and the lock released",
				fn:      func(context.Context, int64) error { return errWork },
				wantErr: []error{errWork},
				want:    map[string]float64{"lock_releases_total/ok": 1},
			},
			{
				name:   "abandonment cancels the work and skips release",
				policy: Policy{TTL: 2 * time.Second, RenewInterval: 20 * time.Millisecond},
				faulty: true,
				fn: func(ctx context.Context, _ int64) error {
					<-ctx.Done()
					return ctx.Err()
				},
				wantErr: []error{context.Canceled, ErrAbandoned},
				want:    map[string]float64{"lock_releases_total/skipped": 1, "lock_abandoned_total": 1},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				hook := renewHook(tc.faulty)
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "scheduler", tc.policy)
				key := uniqueKey(t)
				err := n.Do(context.Background(), key, tc.fn)
				for _, want := range tc.wantErr {
					if !errors.Is(err, want) {
						t.Errorf("Do = %v, want it to match %v", err, want)
					}
				}
				if tc.wantErr == nil && err != nil {
					t.Errorf("Do = %v", err)
				}
				tc.want["lock_held"] = 0
				e.wantMetrics(t, "scheduler", tc.want)
			})
		}
	})
}

// A panicking critical section still releases its lease (and stops its renewer).
func TestDoReleasesOnPanic(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "scheduler", Policy{TTL: 10 * time.Second})
	key := uniqueKey(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic swallowed")
			}
		}()
		_ = n.Do(context.Background(), key, func(context.Context, int64) error { panic("boom") })
	}()
	if e.rdb.Exists(context.Background(), key).Val() != 0 {
		t.Error("lock left behind by a panicking Do")
	}
	e.wantMetrics(t, "scheduler", map[string]float64{"lock_releases_total/ok": 1, "lock_held": 0})
}

// Do returns the acquire error without running fn.
func TestDoBusy(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "scheduler", Policy{AcquireTimeout: busyWait, RetryBackoff: busyWait, ReleaseTimeout: patient})
	key := uniqueKey(t)
	holder, err := n.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(context.Background())
	ran := false
	if err := n.Do(context.Background(), key, func(context.Context, int64) error { ran = true; return nil }); !errors.Is(err, ErrBusy) || ran {
		t.Errorf("Do on a held lock = %v (ran %v), want ErrBusy without running", err, ran)
	}
}
