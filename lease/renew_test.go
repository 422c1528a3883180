package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// renewHook is a faultHook on the renew script that fails every renew with errInjected when
// fail is set, and counts them either way.
func renewHook(fail bool) *faultHook {
	return &faultHook{match: isScript(renewScript.Source()), plan: func(int) (time.Duration, error) {
		if fail {
			return 0, errInjected
		}
		return 0, nil
	}}
}

// Test 1: renew always fails → exactly MaxRenewFailures attempts, then the holder's context is
// cancelled with cause ErrAbandoned, release is skipped and the key stays in Redis.
func TestRenewAlwaysFailingAbandonsAfterExactlyMaxFailures(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		for _, bound := range []int{1, 3} {
			t.Run(fmt.Sprintf("max=%d", bound), func(t *testing.T) {
				hook := renewHook(true)
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "scheduler", Policy{TTL: 5 * time.Second, RenewInterval: 60 * time.Millisecond, MaxRenewFailures: bound})
				key := uniqueKey(t)
				l, err := n.Acquire(context.Background(), key)
				if err != nil {
					t.Fatal(err)
				}
				waitCancelled(t, l)
				if cause := context.Cause(l.Context()); !errors.Is(cause, ErrAbandoned) {
					t.Fatalf("cause = %v, want ErrAbandoned", cause)
				}
				// Several more intervals: the renewer must have stopped for good.
				time.Sleep(4 * n.policy.RenewInterval)
				if got := hook.calls.Load(); got != int64(bound) {
					t.Fatalf("renew attempts = %d, want exactly %d", got, bound)
				}
				if err := l.Renew(context.Background()); !errors.Is(err, ErrAbandoned) {
					t.Fatalf("Renew after abandonment = %v, want ErrAbandoned", err)
				}
				if err := l.Release(context.Background()); !errors.Is(err, ErrAbandoned) {
					t.Fatalf("Release after abandonment = %v, want ErrAbandoned", err)
				}
				if got, _ := e.rdb.Get(context.Background(), key).Result(); got != l.token {
					t.Fatal("lock key not left in place after abandonment")
				}
				e.wantMetrics(t, "scheduler", map[string]float64{
					"lock_renewals_total/failed":         float64(bound),
					"lock_renewals_total/ok":             0,
					"lock_abandoned_total":               1,
					"lock_releases_total/skipped":        1,
					"lock_releases_total/ok":             0,
					"lock_held":                          0,
					"lock_held_seconds":                  1,
					"lock_acquire_wait_seconds/acquired": 1,
				})
				logs := e.logs.String()
				if !strings.Contains(logs, "lock abandoned") || !strings.Contains(logs, "lock_namespace=scheduler") {
					t.Errorf("abandonment not logged with its namespace:\n%s", logs)
				}
				if strings.Contains(logs, l.token) {
					t.Error("the owner token appears in the logs")
				}
			})
		}
	})
}

// Test 2: intermittent failures never reach the bound of consecutive failures: a successful
// renew resets the count.
func TestIntermittentRenewFailuresNeverAbandon(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		tests := []struct {
			name    string
			max     int
			pattern []bool // true = fail
		}{
			{"fail-ok alternating, bound 2", 2, []bool{true, false}},
			{"two fails then ok, bound 3", 3, []bool{true, true, false}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				hook := &faultHook{match: isScript(renewScript.Source()), plan: func(n int) (time.Duration, error) {
					if tc.pattern[n%len(tc.pattern)] {
						return 0, errInjected
					}
					return 0, nil
				}}
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "scheduler", Policy{TTL: 5 * time.Second, RenewInterval: 40 * time.Millisecond, RenewTimeout: time.Second, MaxRenewFailures: tc.max})
				l, err := n.Acquire(context.Background(), uniqueKey(t))
				if err != nil {
					t.Fatal(err)
				}
				renewals := func(outcome string) float64 {
					return e.metric(t, "lock_renewals_total", namespaceLabel, "scheduler", "outcome", outcome)
				}
				rounds := float64(4 * len(tc.pattern))
				testkit.Eventually(t, 30*time.Second, "renew rounds", func() bool {
					return renewals("ok")+renewals("failed") >= rounds || l.Context().Err() != nil
				})
				if err := l.Context().Err(); err != nil {
					t.Fatalf("holder context ended (%v) under intermittent failures", context.Cause(l.Context()))
				}
				if err := l.Release(context.Background()); err != nil {
					t.Fatalf("Release: %v", err)
				}
				if ok, failed := renewals("ok"), renewals("failed"); ok < 4 || failed < 4 {
					t.Errorf("renewals ok=%v failed=%v, want at least 4 of each", ok, failed)
				}
				e.wantMetrics(t, "scheduler", map[string]float64{
					"lock_abandoned_total":   0,
					"lock_releases_total/ok": 1,
					"lock_held":              0,
				})
			})
		}
	})
}

// Test 4: a renew after the key expired fails and is counted as not_owned; the Abandon policy
// abandons at once, the Continue policy keeps the work running but stops renewing. (A renew
// held up past the lease's expiry is a different case under Abandon: the lease is abandoned at
// its lapse, see TestAbandonBeforeTheKeyCanExpire.)
func TestRenewAfterExpiry(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		t.Run("manual", func(t *testing.T) {
			e := newEnvMode(t, sharedAddr, single)
			n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second, DisableRenewal: true})
			l, err := n.Acquire(context.Background(), uniqueKey(t))
			if err != nil {
				t.Fatal(err)
			}
			// The key expires behind the holder's back, before its lapse (past the lapse the
			// lease has ended and Renew is refused: TestUnrenewedLeaseEndsAtItsLapse).
			if err := e.rdb.PExpire(context.Background(), l.key, time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			testkit.Eventually(t, 20*time.Second, "key expiry", func() bool { return e.rdb.Exists(context.Background(), l.key).Val() == 0 })
			if err := l.Renew(context.Background()); !errors.Is(err, ErrNotOwned) {
				t.Fatalf("Renew after expiry = %v, want ErrNotOwned", err)
			}
			e.wantMetrics(t, "approval", map[string]float64{"lock_renewals_total/not_owned": 1, "lock_renewals_total/ok": 0})
			if err := l.Release(context.Background()); !errors.Is(err, ErrNotOwned) {
				t.Fatalf("Release after expiry = %v, want ErrNotOwned", err)
			}
			e.wantMetrics(t, "approval", map[string]float64{"lock_releases_total/not_owned": 1})
		})

		for _, tc := range []struct {
			policy        RenewFailurePolicy
			wantAbandoned float64
		}{{Abandon, 1}, {Continue, 0}} {
			t.Run("renewer/"+tc.policy.String(), func(t *testing.T) {
				hook := renewHook(false)
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "workflow", Policy{TTL: 5 * time.Second, RenewInterval: 200 * time.Millisecond, OnRenewFailure: tc.policy})
				key := uniqueKey(t)
				l, err := n.Acquire(context.Background(), key)
				if err != nil {
					t.Fatal(err)
				}
				// The key expires before the first renew, behind the holder's back (Redis lost it,
				// or a clock ran fast): that renew reaches Redis and finds it gone.
				if err := e.rdb.PExpire(context.Background(), key, time.Millisecond).Err(); err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, 30*time.Second, "a not-owned renew", func() bool {
					return e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", "not_owned") == 1
				})
				time.Sleep(3 * n.policy.RenewInterval)
				// Usually the first renew finds the key gone; on a starved machine a renew may
				// have succeeded before the PEXPIRE landed. Either way the not-owned one is last.
				ok := e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", "ok")
				if got := hook.calls.Load(); float64(got) != ok+1 {
					t.Errorf("renew attempts = %d after %v ok, want exactly one more (renewing stops once not owned)", got, ok)
				}
				abandoned := errors.Is(context.Cause(l.Context()), ErrAbandoned)
				if abandoned != (tc.policy == Abandon) {
					t.Errorf("abandoned = %v under %s", abandoned, tc.policy)
				}
				e.wantMetrics(t, "workflow", map[string]float64{"lock_abandoned_total": tc.wantAbandoned})
				err = l.Release(context.Background())
				if tc.policy == Abandon && !errors.Is(err, ErrAbandoned) || tc.policy == Continue && !errors.Is(err, ErrNotOwned) {
					t.Errorf("Release = %v", err)
				}
			})
		}
	})
}

// Test 8: under Continue, work keeps running through renew failures, each one counted and
// logged as a warning with the namespace, never the token.
func TestContinuePolicyKeepsWorkingThroughFailures(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		hook := renewHook(true)
		e := newEnvMode(t, sharedAddr, single, hook)
		n := e.namespace(t, "workflow", Policy{TTL: 5 * time.Second, RenewInterval: 30 * time.Millisecond, OnRenewFailure: Continue, LocalMutex: true})
		failed := func() float64 {
			return e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", "failed")
		}
		err := n.Do(context.Background(), uniqueKey(t), func(ctx context.Context, fence int64) error {
			testkit.Eventually(t, 30*time.Second, "five failed renews", func() bool { return failed() >= 5 })
			if ctx.Err() != nil {
				t.Errorf("work context cancelled under Continue: %v", context.Cause(ctx))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		// Read after Do returned, so no renew runs any more. A renew cut short by the release
		// reached the hook but has no outcome to count.
		counted, attempts := failed(), float64(hook.calls.Load())
		if counted != attempts && counted != attempts-1 {
			t.Errorf("failed renewals counted %v for %v attempts", counted, attempts)
		}
		e.wantMetrics(t, "workflow", map[string]float64{
			"lock_abandoned_total":   0,
			"lock_releases_total/ok": 1,
			"lock_held":              0,
		})
		logs := e.logs.String()
		if got := strings.Count(logs, "lock renewal failed"); float64(got) != counted {
			t.Errorf("%d renew warnings logged for %v counted failures", got, counted)
		}
		if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "lock_namespace=workflow") {
			t.Errorf("renew failures not logged as warnings with the namespace:\n%s", logs)
		}
	})
}

// Under Abandon, while renews fail, the holder's context ends at the lease's lapse — its
// ValidUntil, the drift margin before the key can expire by the library's own clock — whatever
// MaxRenewFailures allows: with the default shape (RenewInterval = TTL/3, three failures) the
// third attempt would start only as the key expires, so the lease is abandoned after fewer
// failed renews than the bound, and no renew runs past ValidUntil. Renews that fail at once and
// renews that hang are both bounded so.
//
// The test asserts the library's bookkeeping and the order of events, not a race with Redis's
// expiry: a process descheduled at the lapse (CPU starvation, GC) is abandoned only when it
// runs again, which no in-process timer can prevent; that is what fence tokens are for. So: the
// context is never cancelled before ValidUntil (no failure count reached the bound), every
// renew was sent with a deadline no later than ValidUntil, fewer than MaxRenewFailures renews
// failed, and ValidUntil itself is no later than the key's real expiry (checked against PTTL
// right after acquiring). The TTL leaves two renew intervals of a second each, so that a tick
// late by less than a second still fails before the lapse.
func TestAbandonBeforeTheKeyCanExpire(t *testing.T) {
	const ttl = 3 * time.Second
	for _, tc := range []struct {
		name string
		plan func(int) (time.Duration, error)
	}{
		{"failing", func(int) (time.Duration, error) { return 0, errInjected }},
		{"hanging", func(int) (time.Duration, error) { return 10 * time.Second, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachMode(t, func(t *testing.T, single bool) {
				t.Parallel()
				hook := &faultHook{match: isScript(renewScript.Source()), plan: tc.plan}
				e := newEnvMode(t, sharedAddr, single, hook)
				n := e.namespace(t, "scheduler", Policy{TTL: ttl, RenewInterval: ttl / 3, RenewTimeout: ttl / 3})
				l, err := n.Acquire(context.Background(), uniqueKey(t))
				if err != nil {
					t.Fatal(err)
				}
				validUntil := validityWithinExpiry(t, e, l, "acquire")
				waitCancelled(t, l)
				cancelledBy := time.Now()
				if cause := context.Cause(l.Context()); !errors.Is(cause, ErrAbandoned) {
					t.Fatalf("cause = %v, want ErrAbandoned", cause)
				}
				if cancelledBy.Before(validUntil) {
					t.Errorf("abandoned %s before ValidUntil, with fewer failures than the bound", validUntil.Sub(cancelledBy))
				}
				for i, d := range hook.seenDeadlines() {
					if d.IsZero() || d.After(validUntil) {
						t.Errorf("renew %d sent with deadline %v, want one no later than ValidUntil (%s after it)", i, d, d.Sub(validUntil))
					}
				}
				failed := e.metric(t, "lock_renewals_total", namespaceLabel, "scheduler", "outcome", "failed")
				if failed < 1 || failed >= float64(n.policy.MaxRenewFailures) {
					t.Errorf("%v failed renews before the abandonment, want at least 1 and fewer than MaxRenewFailures (%d)", failed, n.policy.MaxRenewFailures)
				}
				if attempts := hook.calls.Load(); float64(attempts) != failed {
					t.Errorf("%d renews sent, %v counted failed: a renew ran after the abandonment", attempts, failed)
				}
				e.wantMetrics(t, "scheduler", map[string]float64{
					"lock_renewals_total/ok": 0,
					"lock_abandoned_total":   1,
					"lock_held":              0,
				})
				if got := l.ValidUntil(); !got.IsZero() {
					t.Errorf("ValidUntil after abandonment = %s from now, want the zero time", time.Until(got))
				}
				if err := l.Release(context.Background()); !errors.Is(err, ErrAbandoned) {
					t.Errorf("Release after abandonment = %v, want ErrAbandoned", err)
				}
			})
		})
	}
}

// A slow log handler never holds the lease's lock: while the renewer's warning is stuck in
// the handler, the holder can still call Renew, and an abandoned holder's context is already
// cancelled before its log line is written.
func TestRenewerLogsOutsideTheLeaseLock(t *testing.T) {
	for _, policy := range []RenewFailurePolicy{Continue, Abandon} {
		t.Run(policy.String(), func(t *testing.T) {
			hook := renewHook(true)
			rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = rdb.Close() })
			rdb.AddHook(hook)
			handler := &blockingHandler{entered: make(chan struct{}), release: make(chan struct{})}
			c, err := New(rdb, Options{Logger: slog.New(handler)})
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.Declare("workflow", Policy{TTL: 5 * time.Second, RenewInterval: 50 * time.Millisecond,
				MaxRenewFailures: 1, OnRenewFailure: policy})
			if err != nil {
				t.Fatal(err)
			}
			l, err := n.Acquire(context.Background(), uniqueKey(t))
			if err != nil {
				t.Fatal(err)
			}
			<-handler.entered // the renewer is writing its first line, and the handler holds it
			if policy == Abandon && context.Cause(l.Context()) != ErrAbandoned {
				t.Errorf("abandoned holder's context not cancelled before its log line: cause %v", context.Cause(l.Context()))
			}
			done := make(chan error, 1)
			go func() { done <- l.Renew(context.Background()) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("Renew blocked while the renewer's log line was in the handler")
			}
			close(handler.release)
			_ = l.Release(context.Background())
		})
	}
}

// blockingHandler holds the first record it is given until release is closed.
type blockingHandler struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *blockingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *blockingHandler) Handle(context.Context, slog.Record) error {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
	return nil
}
func (h *blockingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *blockingHandler) WithGroup(string) slog.Handler      { return h }
