package lease

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// ValidUntil counts from when the acquire or renew was sent, not from when its reply came: a
// reply held back by the network must not stretch the lease. The hook records the moment each
// command was handed on towards Redis; the library took its start before that moment, so
// ValidUntil can be no later than that send + TTL − margin, while a reply-time clock would put
// it at least the reply delay later. And the key itself lives at least until ValidUntil + the
// margin (checked against the PTTL Redis reports).
func TestValidUntilCountsFromTheSendTime(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		const ttl, replyDelay = 10 * time.Second, 300 * time.Millisecond
		margin := driftMargin(ttl)
		hook := &replyDelayHook{match: func(args []any) bool { return isSetNX(args) || isScript(renewScript.Source())(args) }, delay: replyDelay}
		e := newEnvMode(t, sharedAddr, single, hook)
		n := e.namespace(t, "approval", Policy{TTL: ttl, DisableRenewal: true, RenewTimeout: 5 * time.Second, AcquireTimeout: 5 * time.Second})

		// checkWindow checks l.ValidUntil() after a call that started at before.
		checkWindow := func(step string, l *Lease, before time.Time) {
			t.Helper()
			sent := hook.lastSent(t)
			got := validityWithinExpiry(t, e, l, step)
			if earliest, latest := before.Add(ttl-margin), sent.Add(ttl-margin); got.Before(earliest) || got.After(latest) {
				t.Errorf("%s: ValidUntil − TTL + margin = call start + %s, want within [call start, send at call start + %s]; a reply-time clock gives ≥ call start + %s",
					step, got.Add(margin-ttl).Sub(before), sent.Sub(before), sent.Add(replyDelay).Sub(before))
			}
		}

		before := time.Now()
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
		checkWindow("acquire", l, before)

		before = time.Now()
		if err := l.Renew(context.Background()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(before); took < replyDelay {
			t.Fatalf("Renew returned after %s, before its reply was released (%s): the hook did not hold it", took, replyDelay)
		}
		checkWindow("renew", l, before)
	})
}

// validityWithinExpiry returns l.ValidUntil() after checking it against the key's real
// expiry: Redis reports PTTL p at some moment before its reply reached us at `after`, so the
// key expires no later than after + p (+1ms: PTTL is rounded down to whole milliseconds). The
// library's clock must never promise more than that, however the process was scheduled.
func validityWithinExpiry(t testing.TB, e *env, l *Lease, step string) time.Time {
	t.Helper()
	got := l.ValidUntil()
	pttl, err := e.rdb.PTTL(context.Background(), l.key).Result()
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	earliestExpiry := got.Add(driftMargin(l.ns.policy.TTL))
	if expiresBy := after.Add(pttl + time.Millisecond); earliestExpiry.After(expiresBy) {
		t.Errorf("%s: ValidUntil + margin is %s after the key's latest possible expiry", step, earliestExpiry.Sub(expiresBy))
	}
	return got
}

// A failed renew, manual or background, leaves ValidUntil where it was; only a renew that
// succeeds moves it forward.
func TestValidUntilDoesNotMoveOnAFailedRenew(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		var failing atomic.Bool
		failing.Store(true)
		hook := &faultHook{match: isScript(renewScript.Source()), plan: func(int) (time.Duration, error) {
			if failing.Load() {
				return 0, errInjected
			}
			return 0, nil
		}}
		e := newEnvMode(t, sharedAddr, single, hook)
		n := e.namespace(t, "workflow", Policy{TTL: 10 * time.Second, RenewInterval: 50 * time.Millisecond, OnRenewFailure: Continue})
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
		acquired := l.ValidUntil()
		if acquired.IsZero() {
			t.Fatal("ValidUntil is zero for a held lease")
		}
		if err := l.Renew(context.Background()); !errors.Is(err, errInjected) {
			t.Fatalf("Renew = %v, want the injected failure", err)
		}
		renewals := func(outcome string) float64 {
			return e.metric(t, "lock_renewals_total", namespaceLabel, "workflow", "outcome", outcome)
		}
		testkit.Eventually(t, 10*time.Second, "two failed background renews after the manual one", func() bool { return renewals("failed") >= 3 })
		if got := l.ValidUntil(); !got.Equal(acquired) {
			t.Fatalf("ValidUntil moved by %s after failed renews only", got.Sub(acquired))
		}
		failing.Store(false)
		testkit.Eventually(t, 10*time.Second, "a successful background renew", func() bool { return renewals("ok") >= 1 })
		if got := l.ValidUntil(); !got.After(acquired) {
			t.Fatalf("ValidUntil did not move forward after a successful renew (moved %s)", got.Sub(acquired))
		}
	})
}

// ValidUntil is the zero time once the lease is over: released, abandoned, or answered "not
// owned" (which ends validity under Continue too, although the work goes on).
func TestValidUntilEndsWithTheLease(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, e *env, l *Lease)
	}{
		{"released", func(t *testing.T, _ *env, l *Lease) {
			if err := l.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"not owned under Continue", func(t *testing.T, e *env, l *Lease) {
			if err := e.rdb.Del(context.Background(), l.key).Err(); err != nil {
				t.Fatal(err)
			}
			if err := l.Renew(context.Background()); !errors.Is(err, ErrNotOwned) {
				t.Fatalf("Renew of a deleted key = %v, want ErrNotOwned", err)
			}
			if err := l.Context().Err(); err != nil {
				t.Fatalf("Continue holder's context ended: %v", context.Cause(l.Context()))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sharedAddr)
			n := e.namespace(t, "workflow", Policy{TTL: 10 * time.Second, OnRenewFailure: Continue})
			l, err := n.Acquire(context.Background(), uniqueKey(t))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(context.Background())
			tc.end(t, e, l)
			if got := l.ValidUntil(); !got.IsZero() {
				t.Errorf("ValidUntil = %s from now, want the zero time", time.Until(got))
			}
		})
	}
	t.Run("abandoned", func(t *testing.T) {
		hook := renewHook(true)
		e := newEnv(t, sharedAddr, hook)
		n := e.namespace(t, "scheduler", Policy{TTL: 10 * time.Second, RenewInterval: 20 * time.Millisecond, MaxRenewFailures: 1})
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		waitCancelled(t, l)
		if got := l.ValidUntil(); !got.IsZero() {
			t.Errorf("ValidUntil = %s from now after abandonment, want the zero time", time.Until(got))
		}
		if err := l.Release(context.Background()); !errors.Is(err, ErrAbandoned) {
			t.Errorf("Release = %v, want ErrAbandoned", err)
		}
	})
}
