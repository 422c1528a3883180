package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// An acquire the caller calls off (its context cancelled before the call, or during the first
// round trip to a Redis that does not answer) returns the caller's cancellation and its cause,
// not "no answer from Redis before the acquire deadline", which would send an operator
// looking at Redis for a request that simply went away.
func TestAcquireCancelledByTheCallerSaysSo(t *testing.T) {
	srv := redistest.Start(t)
	e := newEnv(t, srv.Addr)
	// go-redis does not cut a read on cancellation: the round trip ends at the acquire deadline.
	// The deadline is long beside the stalls of a starved machine, so that the caller's
	// cancellation, 100ms into the wait, lands before it.
	ns := e.namespace(t, "called-off", Policy{TTL: time.Second, Fencing: true, AcquireTimeout: 2 * time.Second})
	errGone := errors.New("client went away")
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil || !errors.Is(err, context.Canceled) || !errors.Is(err, errGone) || errors.Is(err, ErrBusy) {
			t.Fatalf("err = %v, want context.Canceled and the caller's cause, not ErrBusy", err)
		}
		if strings.Contains(err.Error(), "no answer from Redis") || !strings.Contains(err.Error(), "cancelled by the caller") {
			t.Errorf("err = %q, want it to say the caller cancelled", err)
		}
	}
	t.Run("before the call", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errGone)
		_, err := ns.Acquire(ctx, "job:1")
		check(t, err)
		_, err = ns.TryAcquire(ctx, "job:1")
		check(t, err)
	})
	t.Run("during the round trip", func(t *testing.T) {
		if _, err := ns.TryAcquire(context.Background(), "job:warm"); err != nil { // loads the script
			t.Fatal(err)
		}
		srv.Pause()
		defer srv.Resume()
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(errGone) })
		_, err := ns.Acquire(ctx, "job:2")
		check(t, err)
	})
}
