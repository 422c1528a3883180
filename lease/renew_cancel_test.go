package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A manual Renew whose caller cancelled its context (before the call, or while Redis did not
// answer) returns the cancellation and is not counted as a failed renewal: the store did not
// fail, and lock_renewals_total{outcome="failed"} feeds LockRenewalFailureRatioHigh. (observe
// does not count a renew its holder called off either.) A renew cut by the caller's deadline
// is a failure and is counted.
func TestRenewCalledOffByTheCallerIsNotAFailure(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnv(t, srv.Addr)
	ns := e.namespace(t, "renew-called-off", Policy{TTL: 3 * time.Second, DisableRenewal: true, RenewTimeout: 300 * time.Millisecond})
	l, err := ns.Acquire(context.Background(), "job:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Renew(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Renew on a cancelled context = %v, want context.Canceled", err)
	}
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := l.Renew(ctx); err == nil {
		t.Fatal("Renew on a paused server succeeded")
	}
	e.wantMetrics(t, "renew-called-off", map[string]float64{"lock_renewals_total/ok": 1, "lock_renewals_total/failed": 0})
	if err := l.Renew(context.Background()); err == nil {
		t.Fatal("Renew on a paused server succeeded")
	}
	e.wantMetrics(t, "renew-called-off", map[string]float64{"lock_renewals_total/ok": 1, "lock_renewals_total/failed": 1})
}
