package drills

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestRedisRestart kills Redis while leases are held and starts an empty one on the same port
// (persistence is off, so every lock and fence key is lost). Each holder learns on its next
// renew that it no longer owns its lock: Abandon abandons at once, Continue stops renewing and its
// release reports ErrNotOwned. Callers hammering Redis meanwhile get errors within their
// timeouts, never a hang, and new owners acquire as soon as the server is back.
func TestRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	a := newAudit(t)
	defer checkLeaks(t)()
	ctx := context.Background()
	w := newWorker(t, a, "holder", srv.Addr, false)
	other := newWorker(t, a, "contender", srv.Addr, false)
	defer w.close()
	defer other.close()
	base := lease.Policy{TTL: 3 * time.Second, RenewInterval: 200 * time.Millisecond, RenewTimeout: 150 * time.Millisecond,
		// Generous, so that a slow restart on a loaded machine cannot abandon by failures first:
		// the drill is about noticing not-owned.
		MaxRenewFailures: 20, AcquireTimeout: 300 * time.Millisecond, ReleaseTimeout: 300 * time.Millisecond, Fencing: true}
	fencePolicy, continuePolicy := base, base
	continuePolicy.OnRenewFailure = lease.Continue
	nf := w.namespace(t, "strict", fencePolicy)
	nc := w.namespace(t, "lenient", continuePolicy)
	no := other.namespace(t, "strict", fencePolicy)

	kf, kc := uniqueKey(t, "strict"), uniqueKey(t, "lenient")
	// A few earlier owners advance the fence counter, so that its loss shows.
	for i := 0; i < 4; i++ {
		if err := nf.Do(ctx, kf, func(context.Context, int64) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	lf, err := nf.Acquire(ctx, kf)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := nc.Acquire(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	a.learn(t, other.rdb, kf)
	a.learn(t, other.rdb, kc)
	fenceBefore := lf.Fence()

	// A contender keeps trying the strict lock across the restart; every call must end within
	// its bound, plus slack for the scheduling stalls the drill measured (a call that ignored
	// its bound would wait for the restart, or go-redis's retries, instead).
	stalls := testkit.StartStallMeter()
	defer stalls.Stop()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls, failed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			start := time.Now()
			l, err := no.TryAcquire(cctx, uniqueKey(t, "contender"))
			if err == nil {
				err = l.Release(cctx)
			}
			cancel()
			if took, limit := time.Since(start), 300*time.Millisecond+stalls.Slack(time.Second); took > limit {
				t.Errorf("contender call took %s during the restart, want at most %s", took, limit)
			}
			calls++
			if err != nil {
				failed++
				a.err("contender error", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	// Down for a few renew intervals, then back empty on the same port.
	srv.Kill()
	time.Sleep(600 * time.Millisecond)
	srv.Restart()

	select {
	case <-lf.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the Abandon holder did not notice the lost lock within 30s")
	}
	testkit.Eventually(t, 30*time.Second, "the Continue holder to find its lock not owned", func() bool {
		return value(t, w.reg, "lenient", "lock_renewals_total/not_owned") >= 1
	})
	close(stop)
	wg.Wait()

	if cause := context.Cause(lf.Context()); cause != lease.ErrAbandoned {
		t.Errorf("Abandon holder's cause = %v, want ErrAbandoned", cause)
	}
	if err := lc.Context().Err(); err != nil {
		t.Errorf("Continue holder's context ended: %v", context.Cause(lc.Context()))
	}
	errF, errC := lf.Release(ctx), lc.Release(ctx)
	a.err("release error", errF)
	a.err("release error", errC)
	if !errors.Is(errF, lease.ErrAbandoned) {
		t.Errorf("Abandon holder's release = %v, want ErrAbandoned", errF)
	}
	if !errors.Is(errC, lease.ErrNotOwned) {
		t.Errorf("Continue holder's release = %v, want ErrNotOwned", errC)
	}
	wantMetrics(t, "holder", w.reg, "strict", map[string]bound{
		"lock_renewals_total/failed":    atLeast(1), // while the server was down
		"lock_renewals_total/not_owned": eq(1),
		"lock_abandoned_total":          eq(1),
		"lock_releases_total/skipped":   eq(1),
		"lock_releases_total/ok":        eq(4),
		"lock_held":                     eq(0),
	})
	wantMetrics(t, "holder", w.reg, "lenient", map[string]bound{
		"lock_renewals_total/failed":    atLeast(1),
		"lock_renewals_total/not_owned": eq(1),
		"lock_abandoned_total":          eq(0),
		"lock_releases_total/not_owned": eq(1),
		"lock_held":                     eq(0),
	})
	if calls == 0 || failed == 0 {
		t.Fatalf("the contender made %d calls, %d failed: it did not run into the outage", calls, failed)
	}

	// The server is empty: a new owner takes the lock at once, and its fence, the server's
	// time, is still above the lost one.
	ln, err := no.TryAcquire(ctx, kf)
	if err != nil {
		t.Fatalf("acquire after the restart: %v", err)
	}
	a.learn(t, other.rdb, kf)
	if ln.Fence() <= fenceBefore {
		t.Errorf("fence after the restart = %d, want above the lost fence %d", ln.Fence(), fenceBefore)
	}
	if err := ln.Release(ctx); err != nil {
		t.Errorf("release after the restart: %v", err)
	}
	t.Logf("restart: contender made %d calls (%d failed, none hung); fence %d before, %d after (fence key lost with the data)",
		calls, failed, fenceBefore, ln.Fence())
}
