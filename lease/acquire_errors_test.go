package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// A caller waiting for a busy lock when Redis stops answering gets Redis's silence, counted as
// an error, not ErrBusy: "lock busy" would send the operator looking for a holder while Redis
// is the problem.
func TestAcquireWaitingWhenRedisStopsAnsweringIsAnError(t *testing.T) {
	eachMode(t, func(t *testing.T, batching bool) {
		srv := redistest.Start(t)
		e := newEnvMode(t, srv.Addr, batching)
		n := e.namespace(t, "approval", Policy{AcquireTimeout: time.Second})
		ctx := context.Background()
		key := uniqueKey(t)
		holder, err := n.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := n.Acquire(ctx, key)
			done <- err
		}()
		testkit.Eventually(t, 5*time.Second, "a waiter", func() bool { return e.metric(t, "lock_waiters", namespaceLabel, "approval") == 1 })
		srv.Pause()
		err = <-done
		srv.Resume()
		if err == nil || errors.Is(err, ErrBusy) {
			t.Fatalf("Acquire while Redis stopped answering = %v, want a Redis error", err)
		}
		if msg := err.Error(); !strings.Contains(msg, key) || !strings.Contains(msg, "approval") {
			t.Errorf("error %q does not name the key and the namespace", msg)
		}
		e.wantMetrics(t, "approval", map[string]float64{
			"lock_acquire_wait_seconds/error": 1, "lock_acquire_wait_seconds/busy": 0, "lock_waiters": 0,
		})
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// ErrBusy names the key and the namespace, whichever way the lock turned out busy: one attempt,
// a wait that ran out in Redis, or one that ran out on the local mutex.
func TestBusyErrorNamesKeyAndNamespace(t *testing.T) {
	e := newEnv(t, sharedAddr)
	ctx := context.Background()
	for _, local := range []bool{false, true} {
		ns := map[bool]string{false: "redis-wait", true: "local-wait"}[local]
		n := e.namespace(t, ns, Policy{LocalMutex: local, AcquireTimeout: busyWait, RetryBackoff: busyWait, ReleaseTimeout: patient})
		key := uniqueKey(t)
		holder, err := n.Acquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		for name, acquire := range map[string]func(context.Context, string) (*Lease, error){"Acquire": n.Acquire, "TryAcquire": n.TryAcquire} {
			_, err := acquire(ctx, key)
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("%s %s: %v, want ErrBusy", ns, name, err)
			}
			if msg := err.Error(); !strings.Contains(msg, `"`+key+`"`) || !strings.Contains(msg, "namespace "+ns) {
				t.Errorf("%s %s: %q does not name the key and the namespace", ns, name, msg)
			}
		}
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := e.namespace(t, "invalid", Policy{})
	if _, err := n.Acquire(ctx, ""); !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "namespace invalid") {
		t.Errorf("Acquire of an empty key: %v, want ErrInvalidKey naming the namespace", err)
	}
}

// A busy answer to a single attempt costs one allocation, its message formatted only when
// read: on a contended key most TryAcquire calls end so, and formatting each with fmt.Errorf
// costs four allocations and about 4% of the client's CPU.
func TestBusyErrorIsCheap(t *testing.T) {
	n := &Namespace{name: "jobs"}
	var err error
	allocs := testing.AllocsPerRun(100, func() { err = n.busyError(nil, "job:1") })
	if allocs > 1 {
		t.Errorf("busyError costs %.0f allocations, want at most 1", allocs)
	}
	if !errors.Is(err, ErrBusy) || err.Error() != `lease: lock busy: acquire "job:1" in namespace jobs` {
		t.Errorf("busyError = %q (ErrBusy: %v), want ErrBusy naming the key and the namespace", err, errors.Is(err, ErrBusy))
	}
}
