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

// TestRedisFrozen stops Redis with SIGSTOP: its sockets stay open and accept connections, but
// nothing is answered, the hardest failure for a client to notice. Every lease call must give
// up within its own timeout, the Abandon holder must abandon on schedule, and once Redis is
// continued with SIGCONT everything works again and no goroutine is left behind.
func TestRedisFrozen(t *testing.T) {
	srv := redistest.Start(t)
	a := newAudit(t)
	defer checkLeaks(t)()
	ctx := context.Background()
	w := newWorker(t, a, "worker", srv.Addr, false)
	defer w.close()
	const callTimeout = 300 * time.Millisecond
	// The slack of every bound covers scheduling under the race detector, widened by the stalls
	// the drill measured; a call that did not honour its timeout would block for as long as
	// Redis stays frozen.
	stalls := testkit.StartStallMeter()
	defer stalls.Stop()
	policy := lease.Policy{TTL: 5 * time.Second, RenewInterval: 200 * time.Millisecond, RenewTimeout: 150 * time.Millisecond,
		MaxRenewFailures: 3, AcquireTimeout: callTimeout, ReleaseTimeout: callTimeout, Fencing: true}
	cont := policy
	cont.OnRenewFailure = lease.Continue
	nf := w.namespace(t, "strict", policy)
	nc := w.namespace(t, "lenient", cont)
	lf, err := nf.Acquire(ctx, uniqueKey(t, "strict"))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := nc.Acquire(ctx, uniqueKey(t, "lenient"))
	if err != nil {
		t.Fatal(err)
	}
	lr, err := nc.Acquire(ctx, uniqueKey(t, "release"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*lease.Lease{lf, lc, lr} {
		a.learn(t, w.rdb, l.Key())
	}

	srv.Pause()
	frozenAt := time.Now()
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Acquire", func(ctx context.Context) error { _, err := nf.Acquire(ctx, uniqueKey(t, "new")); return err }},
		{"TryAcquire", func(ctx context.Context) error { _, err := nc.TryAcquire(ctx, uniqueKey(t, "new")); return err }},
		{"Renew", func(ctx context.Context) error { return lc.Renew(ctx) }},
		{"FencedSet", func(ctx context.Context) error {
			return nf.FencedSet(ctx, lf.Key(), lf.Fence(), "{"+lf.Key()+"}:data", "v", 0)
		}},
		{"Do", func(ctx context.Context) error {
			return nf.Do(ctx, uniqueKey(t, "do"), func(context.Context, int64) error { return nil })
		}},
		// Release is bounded by ReleaseTimeout even with a caller context that never ends.
		{"Release", func(context.Context) error { return lr.Release(context.Background()) }},
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			var err error
			within(t, callTimeout, stalls, c.name+" on a frozen Redis", func() { err = c.call(cctx) })
			a.err(c.name+" error", err)
			if err == nil {
				t.Errorf("%s on a frozen Redis succeeded", c.name)
			}
			if errors.Is(err, lease.ErrNotOwned) || errors.Is(err, lease.ErrBusy) && c.name != "Acquire" && c.name != "Do" {
				t.Errorf("%s on a frozen Redis = %v: a frozen server must not be reported as an ownership answer", c.name, err)
			}
		}()
	}
	wg.Wait()
	select {
	case <-lf.Context().Done():
		// Three renews, each bounded by its timeout and spaced by the interval.
		if took, limit := time.Since(frozenAt), 3*policy.RenewInterval+stalls.Slack(time.Second); took > limit {
			t.Errorf("Abandon holder abandoned %s after the freeze, want within %s", took, limit)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the Abandon holder did not abandon within 30s of the freeze")
	}
	srv.Resume()

	if err := lf.Release(ctx); !errors.Is(err, lease.ErrAbandoned) {
		t.Errorf("release of the abandoned lease = %v, want ErrAbandoned", err)
	}
	testkit.Eventually(t, 5*time.Second, "Redis to answer after SIGCONT", func() bool { return w.rdb.Ping(ctx).Err() == nil })
	// The Continue lease survived the freeze: its key outlived it (TTL 5s).
	if err := lc.Release(ctx); err != nil {
		t.Errorf("release of the Continue lease after SIGCONT: %v", err)
	}
	l, err := nf.Acquire(ctx, uniqueKey(t, "after"))
	if err != nil {
		t.Fatalf("acquire after SIGCONT: %v", err)
	}
	a.learn(t, w.rdb, l.Key())
	if err := l.Release(ctx); err != nil {
		t.Errorf("release after SIGCONT: %v", err)
	}
	wantMetrics(t, "worker", w.reg, "strict", map[string]bound{
		"lock_renewals_total/failed":       eq(3),
		"lock_abandoned_total":             eq(1),
		"lock_acquire_wait_seconds/error":  atLeast(2), // Acquire and Do
		"lock_fenced_writes_total/applied": eq(0),
		"lock_held":                        eq(0),
	})
	wantMetrics(t, "worker", w.reg, "lenient", map[string]bound{
		"lock_acquire_wait_seconds/error": eq(1),
		"lock_releases_total/error":       eq(1),
		"lock_releases_total/ok":          eq(1),
		"lock_renewals_total/failed":      atLeast(1),
		"lock_held":                       eq(0),
	})
}
