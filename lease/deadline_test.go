package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Against a frozen Redis, calls on a context without a deadline return within the policy's own
// timeouts. Without those bounds go-redis retries each timed-out read (MaxRetries 3, ReadTimeout
// 3s by default), and an Acquire on context.Background() took about 10s.
func TestPolicyTimeoutsBoundCallsWithoutDeadline(t *testing.T) {
	// Short: the slack of the check comes from the measured stalls, and a call that ignored
	// its bound would wait for go-redis's retries (about 10s).
	const bound = 150 * time.Millisecond
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		e := newEnvMode(t, srv.Addr, single)
		stalls := stallMeter(t)
		n := e.namespace(t, "approval", Policy{
			TTL: 10 * time.Second, DisableRenewal: true, Fencing: true,
			AcquireTimeout: bound, RenewTimeout: bound, ReleaseTimeout: bound,
		})
		ctx := context.Background()
		held := acquireRetryingTimeouts(t, n)
		// The tries a starved machine took to get the lease above failed on the short bound
		// while Redis answered; the checks below count only the calls made while it is frozen.
		setupErrors := e.metric(t, "lock_acquire_wait_seconds", namespaceLabel, "approval", "outcome", "error")
		srv.Pause()
		defer srv.Resume()

		for _, tc := range []struct {
			name string
			call func() error
		}{
			{"Acquire", func() error { _, err := n.Acquire(ctx, uniqueKey(t)); return err }},
			{"TryAcquire", func() error { _, err := n.TryAcquire(ctx, uniqueKey(t)); return err }},
			{"Do", func() error {
				return n.Do(ctx, uniqueKey(t), func(context.Context, int64) error { return nil })
			}},
			{"Renew", func() error { return held.Renew(ctx) }},
			{"FencedSet", func() error { return n.FencedSet(ctx, held.Key(), held.Fence(), besideLock(held.Key()), "v", 0) }},
			{"Release", func() error { return held.Release(ctx) }},
		} {
			start := time.Now()
			err := tc.call()
			took := time.Since(start)
			if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrNotOwned) || errors.Is(err, ErrStaleFence) {
				t.Errorf("%s with Redis frozen = %v, want a Redis error, not an ownership answer", tc.name, err)
			}
			if slack := stalls.Slack(callSlack); took > bound+slack {
				t.Errorf("%s with Redis frozen took %s, want at most its %s policy timeout (+ %s slack for the stalls seen)", tc.name, took, bound, slack)
			}
		}
		e.wantMetrics(t, "approval", map[string]float64{
			"lock_acquire_wait_seconds/error": setupErrors + 3,
			"lock_renewals_total/failed":      1,
			"lock_releases_total/error":       1,
		})
	})
}

// acquireRetryingTimeouts acquires a fresh key of n, trying again while the acquire runs out of n's
// AcquireTimeout: a bound short enough to time a frozen Redis can be shorter than a round trip
// on a machine starved by CPU hogs. Each try takes a new key, so that a try whose SET reached
// Redis after its deadline leaves no lock in the way of the next.
func acquireRetryingTimeouts(t testing.TB, n *Namespace) *Lease {
	t.Helper()
	giveUp := time.Now().Add(30 * time.Second)
	for {
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		switch {
		case err == nil:
			return l
		case !errors.Is(err, context.DeadlineExceeded) || time.Now().After(giveUp):
			t.Fatalf("Acquire with Redis answering: %v", err)
		}
	}
}
