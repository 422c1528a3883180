package drills

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/faultproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// networkFaults are the link failures the drills inject between a client and Redis.
var networkFaults = []struct {
	name   string
	inject func(p *faultproxy.Proxy)
}{
	// Every reply arrives well past the renew timeout (drillRenewTimeout).
	{"latency", func(p *faultproxy.Proxy) { p.SetLatency(3 * drillRenewTimeout) }},
	// Nothing gets through and nothing is closed: calls hang until their own timeout.
	{"blackhole", func(p *faultproxy.Proxy) { p.Blackhole() }},
	// Every connection, open or new, is reset.
	{"reset", func(p *faultproxy.Proxy) { p.Reset() }},
}

// drillRenewTimeout bounds the renews of the network drills: long enough that a renew over a
// healthy link does not time out on a starved machine (which would start the count of
// consecutive failures before the fault), short against the injected latency.
const drillRenewTimeout = 250 * time.Millisecond

// TestNetworkFaults holds a lease while the link to Redis fails. Under Abandon the lease is
// abandoned after exactly MaxRenewFailures consecutive failed renews: the holder's context ends
// with ErrAbandoned, renewing stops, release is skipped and the key is left to expire. Under
// Continue the holder keeps working, every failure is counted, and renewing succeeds again once
// the link heals.
func TestNetworkFaults(t *testing.T) {
	const maxFailures = 3
	for _, fault := range networkFaults {
		for _, policy := range []lease.RenewFailurePolicy{lease.Abandon, lease.Continue} {
			t.Run(fault.name+"/"+policy.String(), func(t *testing.T) {
				srv := redistest.Start(t)
				a := newAudit(t)
				defer checkLeaks(t)()
				ctx := context.Background()
				w := newWorker(t, a, "holder", srv.Addr, true)
				obs := newWorker(t, a, "observer", srv.Addr, false)
				defer w.close()
				defer obs.close()
				interval := drillRenewTimeout + 50*time.Millisecond
				ns := w.namespace(t, "jobs", lease.Policy{TTL: 10 * time.Second, RenewInterval: interval,
					RenewTimeout: drillRenewTimeout, MaxRenewFailures: maxFailures, OnRenewFailure: policy})
				key := uniqueKey(t, "lock")
				l, err := ns.Acquire(ctx, key)
				if err != nil {
					t.Fatalf("acquire: %v", err)
				}
				tok := a.learn(t, obs.rdb, key)
				failedBefore := value(t, w.reg, "jobs", "lock_renewals_total/failed")
				fault.inject(w.proxy)

				if policy == lease.Abandon {
					select {
					case <-l.Context().Done():
					case <-time.After(30 * time.Second):
						t.Fatalf("lease not abandoned 30s into the %s fault", fault.name)
					}
					if cause := context.Cause(l.Context()); cause != lease.ErrAbandoned {
						t.Errorf("context cause = %v, want ErrAbandoned", cause)
					}
					// The bound counts consecutive failures, so the abandonment's own record is
					// the proof (a renew that timed out on a starved machine before the fault
					// would be counted too, but followed by a success). Renewing has stopped:
					// two more intervals (the renewer re-arms one interval ahead) add no attempt.
					failedAtAbandon := value(t, w.reg, "jobs", "lock_renewals_total/failed")
					wantAbandonedAfter(t, w.logs, "jobs", maxFailures)
					if got := failedAtAbandon - failedBefore; got < maxFailures {
						t.Errorf("failed renews during the fault = %v, want at least %d", got, maxFailures)
					}
					time.Sleep(2 * interval)
					if got := value(t, w.reg, "jobs", "lock_renewals_total/failed"); got != failedAtAbandon {
						t.Errorf("%v failed renews after the abandonment, want none", got-failedAtAbandon)
					}
					w.proxy.Heal()
					err := l.Release(ctx)
					a.err("release error", err)
					if !errors.Is(err, lease.ErrAbandoned) {
						t.Errorf("release after abandoning = %v, want ErrAbandoned", err)
					}
					// The lock is left in place to expire, never deleted under a possible new owner.
					if got := obs.rdb.Get(ctx, key).Val(); got != tok {
						t.Errorf("the abandoned lock key was changed or deleted")
					}
					wantMetrics(t, "holder", w.reg, "jobs", map[string]bound{
						"lock_abandoned_total":        eq(1),
						"lock_releases_total/skipped": eq(1),
						"lock_releases_total/ok":      eq(0),
						"lock_held":                   eq(0),
						"lock_held_seconds":           eq(1),
					})
					wantLogCount(t, w.logs.String(), "lock abandoned", 1)
					// One warning per failed renew that did not abandon.
					wantLogCount(t, w.logs.String(), "lock renewal failed", int(failedAtAbandon)-1)
					return
				}

				// Continue: the work goes on through more failures than Abandon would allow.
				testkit.Eventually(t, 30*time.Second, "Continue to count more failures than the Abandon bound", func() bool {
					return value(t, w.reg, "jobs", "lock_renewals_total/failed")-failedBefore >= maxFailures+2
				})
				if err := l.Context().Err(); err != nil {
					t.Fatalf("Continue ended the holder's context: %v", context.Cause(l.Context()))
				}
				w.proxy.Heal()
				okBefore := value(t, w.reg, "jobs", "lock_renewals_total/ok")
				testkit.Eventually(t, 30*time.Second, "a successful renew after the link healed", func() bool {
					return value(t, w.reg, "jobs", "lock_renewals_total/ok") > okBefore
				})
				if err := l.Release(ctx); err != nil {
					t.Errorf("release after the link healed: %v", err)
				}
				if n := obs.rdb.Exists(ctx, key).Val(); n != 0 {
					t.Errorf("lock key still exists after release")
				}
				wantMetrics(t, "holder", w.reg, "jobs", map[string]bound{
					"lock_renewals_total/failed":    atLeast(maxFailures + 2),
					"lock_renewals_total/not_owned": eq(0),
					"lock_abandoned_total":          eq(0),
					"lock_releases_total/ok":        eq(1),
					"lock_held":                     eq(0),
				})
				if logs := w.logs.String(); !strings.Contains(logs, fmt.Sprintf("consecutive_failures=%d", maxFailures+2)) {
					t.Errorf("no warning counts %d consecutive failures:\n%s", maxFailures+2, logs)
				}
			})
		}
	}
}

// wantAbandonedAfter fails the test unless logs come to hold the abandonment of a lease of
// namespace ns that records exactly failures consecutive failed renews: the library's own
// account that the failure bound, not a stray timeout before the fault, ended the lease. The
// line is written just after the holder's context is cancelled, so it is waited for.
func wantAbandonedAfter(t *testing.T, logs *testkit.SyncBuffer, ns string, failures int) {
	t.Helper()
	found := func() bool {
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, `msg="lock abandoned`) && strings.Contains(line, "lock_namespace="+ns+" ") &&
				strings.Contains(line, fmt.Sprintf("consecutive_failures=%d ", failures)) {
				return true
			}
		}
		return false
	}
	for giveUp := time.Now().Add(10 * time.Second); !found(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(giveUp) {
			t.Errorf("no abandonment in namespace %s after %d consecutive failed renews:\n%s", ns, failures, logs.String())
			return
		}
	}
}

func wantLogCount(t *testing.T, logs, msg string, want int) {
	t.Helper()
	if got := strings.Count(logs, "msg=\""+msg); got != want {
		t.Errorf("%d log lines %q, want %d:\n%s", got, msg, want, logs)
	}
}
