package drills

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestPausedWorker is the seeds' drill: worker A holds a fenced lease and stops (its goroutine
// blocked, its renewals failing, as in a long GC pause or a frozen VM) for longer than the TTL.
// The lease expires, worker B acquires it and writes. When A resumes, nothing it does can hurt
// B: its renew and release report that it no longer owns the lock (or, under Abandon, that it
// abandoned it), its fenced write is rejected, and B's lock and data are untouched.
func TestPausedWorker(t *testing.T) {
	// Room for MaxRenewFailures attempts before the lapse (3 × 300ms + 250ms < 1.5s − 1%), and
	// renews over the healthy link get 250ms: enough that none times out on a starved machine
	// before the pause begins.
	const ttl = 1500 * time.Millisecond
	cases := []struct {
		name   string
		policy lease.RenewFailurePolicy
		// wantErr is what A's Renew and Release return after the pause.
		wantErr error
		// wantCause is A's context cause after the pause (nil: not cancelled).
		wantCause error
		wantA     map[string]bound
	}{{
		name:    "continue",
		policy:  lease.Continue,
		wantErr: lease.ErrNotOwned,
		wantA: map[string]bound{
			"lock_acquire_wait_seconds/acquired": eq(1),
			"lock_renewals_total/failed":         atLeast(2),
			"lock_renewals_total/not_owned":      atLeast(1),
			"lock_releases_total/not_owned":      eq(1),
			"lock_releases_total/ok":             eq(0),
			"lock_abandoned_total":               eq(0),
			"lock_fenced_writes_total/applied":   eq(1),
			"lock_fenced_writes_total/rejected":  eq(1),
			"lock_held":                          eq(0),
			"lock_held_seconds":                  eq(1),
		},
	}, {
		name:      "abandon",
		policy:    lease.Abandon,
		wantErr:   lease.ErrAbandoned,
		wantCause: lease.ErrAbandoned,
		wantA: map[string]bound{
			"lock_acquire_wait_seconds/acquired": eq(1),
			// Exactly MaxRenewFailures consecutive ones (the abandonment's log line says so);
			// a renew that timed out on a starved machine before the pause adds to the total.
			"lock_renewals_total/failed":        atLeast(3),
			"lock_renewals_total/not_owned":     eq(0),
			"lock_releases_total/skipped":       eq(1),
			"lock_releases_total/ok":            eq(0),
			"lock_abandoned_total":              eq(1),
			"lock_fenced_writes_total/applied":  eq(1),
			"lock_fenced_writes_total/rejected": eq(1),
			"lock_held":                         eq(0),
			"lock_held_seconds":                 eq(1),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			a := newAudit(t)
			defer checkLeaks(t)()
			ctx := context.Background()
			wa := newWorker(t, a, "A", srv.Addr, true)
			wb := newWorker(t, a, "B", srv.Addr, false)
			defer wa.close()
			defer wb.close()
			policy := lease.Policy{TTL: ttl, RenewInterval: 300 * time.Millisecond, RenewTimeout: 250 * time.Millisecond,
				MaxRenewFailures: 3, OnRenewFailure: tc.policy, Fencing: true}
			na := wa.namespace(t, "jobs", policy)
			nb := wb.namespace(t, "jobs", policy)
			key := uniqueKey(t, "lock")
			data := "{" + key + "}:data" // beside the lock, in its slot

			// A acquires and writes, then its goroutine blocks until resumed.
			type outcome struct {
				renewErr, releaseErr, writeErr error
				cause                          error
			}
			acquired, resume, done := make(chan *lease.Lease), make(chan struct{}), make(chan outcome)
			go func() {
				l, err := na.Acquire(ctx, key)
				if err != nil {
					t.Errorf("A: acquire: %v", err)
					close(acquired)
					return
				}
				if err := na.FencedSet(ctx, key, l.Fence(), data, "written by A", 0); err != nil {
					t.Errorf("A: first write: %v", err)
				}
				acquired <- l
				<-resume // the pause
				var o outcome
				o.cause = context.Cause(l.Context())
				rctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				o.renewErr = l.Renew(rctx)
				o.writeErr = na.FencedSet(rctx, key, l.Fence(), data, "stale write by A", 0)
				o.releaseErr = l.Release(rctx)
				done <- o
			}()
			la, ok := <-acquired
			if !ok {
				t.FailNow()
			}
			a.learn(t, wb.rdb, key)

			// The pause: A's renewals now fail (its link to Redis is dead) while it is blocked.
			wa.proxy.Blackhole()
			testkit.Eventually(t, 30*time.Second, "A's lease to expire in Redis", func() bool {
				return wb.rdb.Exists(ctx, key).Val() == 0
			})
			lb, err := nb.TryAcquire(ctx, key)
			if err != nil {
				t.Fatalf("B: acquire after A's lease expired: %v", err)
			}
			tokB := a.learn(t, wb.rdb, key)
			if lb.Fence() <= la.Fence() {
				t.Fatalf("B's fence %d is not newer than A's %d", lb.Fence(), la.Fence())
			}
			if err := nb.FencedSet(ctx, key, lb.Fence(), data, "written by B", 0); err != nil {
				t.Fatalf("B: write: %v", err)
			}

			// A resumes.
			wa.proxy.Heal()
			close(resume)
			o := <-done
			for what, err := range map[string]error{"renew": o.renewErr, "release": o.releaseErr, "write": o.writeErr} {
				a.err("A's "+what+" error", err)
			}
			if !errors.Is(o.renewErr, tc.wantErr) {
				t.Errorf("A: renew after the pause = %v, want %v", o.renewErr, tc.wantErr)
			}
			if !errors.Is(o.releaseErr, tc.wantErr) {
				t.Errorf("A: release after the pause = %v, want %v", o.releaseErr, tc.wantErr)
			}
			if !errors.Is(o.writeErr, lease.ErrStaleFence) {
				t.Errorf("A: fenced write after the pause = %v, want ErrStaleFence", o.writeErr)
			}
			if o.cause != tc.wantCause {
				t.Errorf("A: context cause at resume = %v, want %v", o.cause, tc.wantCause)
			}

			// B is untouched: its lock, its data and its lease's life.
			if got := wb.rdb.Get(ctx, key).Val(); got != tokB {
				t.Errorf("B's lock key no longer holds B's token after A resumed")
			}
			if got := wb.rdb.Get(ctx, data).Val(); got != "written by B" {
				t.Errorf("data = %q after A resumed, want B's write", got)
			}
			if err := lb.Renew(ctx); err != nil {
				t.Errorf("B: renew after A resumed: %v", err)
			}
			if err := lb.Context().Err(); err != nil {
				t.Errorf("B's context ended: %v", context.Cause(lb.Context()))
			}
			if err := lb.Release(ctx); err != nil {
				t.Errorf("B: release: %v", err)
			}

			wantMetrics(t, "A", wa.reg, "jobs", tc.wantA)
			wantMetrics(t, "B", wb.reg, "jobs", map[string]bound{
				"lock_acquire_wait_seconds/acquired": eq(1),
				"lock_renewals_total/failed":         eq(0),
				"lock_renewals_total/not_owned":      eq(0),
				"lock_renewals_total/ok":             atLeast(1),
				"lock_releases_total/ok":             eq(1),
				"lock_abandoned_total":               eq(0),
				"lock_fenced_writes_total/applied":   eq(1),
				"lock_fenced_writes_total/rejected":  eq(0),
				"lock_held":                          eq(0),
			})
			wantLog := map[lease.RenewFailurePolicy]string{lease.Continue: "lock renewal failed", lease.Abandon: "lock abandoned"}[tc.policy]
			if logs := wa.logs.String(); !strings.Contains(logs, wantLog) {
				t.Errorf("A's log lacks %q:\n%s", wantLog, logs)
			}
			if tc.policy == lease.Abandon {
				wantAbandonedAfter(t, wa.logs, "jobs", 3)
			}
		})
	}
}
