package lease

import (
	"context"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Release returns within its ReleaseTimeout also when a background renew is on the wire to a
// Redis that stopped answering: go-redis does not cut a read on cancellation, so waiting for
// that renew before sending the release added up to RenewTimeout to the bound.
func TestReleaseBoundedWhileARenewHangs(t *testing.T) {
	const releaseTimeout = 300 * time.Millisecond
	for _, mode := range []ReleaseMode{Explicit, HoldUntilExpiry} {
		t.Run(mode.String(), func(t *testing.T) {
			eachMode(t, func(t *testing.T, single bool) {
				srv := redistest.Start(t)
				e := newEnvMode(t, srv.Addr, single)
				// Renews every second, each bounded by four: waiting for the hung renew would keep
				// Release for about 3.8s (until the renew's deadline), far past the bound checked
				// below, so a loaded machine's late timers cannot blur the two.
				ns := e.namespace(t, "release-bound", Policy{TTL: 6 * time.Second, RenewInterval: time.Second,
					RenewTimeout: 4 * time.Second, ReleaseTimeout: releaseTimeout, OnRenewFailure: Continue, ReleaseMode: mode})
				l, err := ns.Acquire(context.Background(), "job:1")
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(800 * time.Millisecond)
				srv.Pause()
				t.Cleanup(srv.Resume)
				time.Sleep(400 * time.Millisecond) // the first renew is on the wire, unanswered
				start := time.Now()
				err = l.Release(context.Background())
				took := time.Since(start)
				if took > releaseTimeout+time.Second {
					t.Errorf("Release took %v (%v), want within ReleaseTimeout %v", took, err, releaseTimeout)
				}
				e.wantMetrics(t, "release-bound", map[string]float64{"lock_held": 0, "lock_renewals_total/failed": 0, "lock_renewals_total/ok": 0})
				srv.Resume()
				time.Sleep(time.Second) // the renew's own deadline passes: it ends, counting nothing
				e.wantMetrics(t, "release-bound", map[string]float64{"lock_renewals_total/failed": 0, "lock_renewals_total/ok": 0})
			})
		})
	}
}
