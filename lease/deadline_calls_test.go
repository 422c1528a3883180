package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// deadlineCall is one caller of the per-caller deadline tests (commands sent in pipelines): what it
// sends and the deadline it brings.
type deadlineCall struct {
	name      string
	bound     time.Duration // the caller's own deadline
	cancelled bool          // no deadline: its context is cancelled by hand after bound
	run       func(ctx context.Context) error
}

// deadlineCalls are acquires alternating between a short and a long deadline, a renew of each
// lease of renewed under renewBound, and a release of each lease of released.
func deadlineCalls(t *testing.T, n *Namespace, acquires int, renewBound time.Duration, renewed, released []*Lease) []deadlineCall {
	var calls []deadlineCall
	for i := range acquires {
		bound := []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}[i%2]
		calls = append(calls, deadlineCall{name: fmt.Sprintf("acquire/%d", i), bound: bound, run: func(ctx context.Context) error {
			_, err := n.TryAcquire(ctx, uniqueKey(t))
			return err
		}})
	}
	for i, l := range renewed {
		calls = append(calls, deadlineCall{name: fmt.Sprintf("renew/%d", i), bound: renewBound, run: l.Renew})
	}
	for i, l := range released {
		// Release brings its own deadline, ReleaseTimeout, and ignores the caller's.
		calls = append(calls, deadlineCall{name: fmt.Sprintf("release/%d", i), bound: n.policy.ReleaseTimeout, run: func(context.Context) error {
			return l.Release(context.Background())
		}})
	}
	return calls
}

// acquireEach acquires count leases of n, each on a key of its own.
func acquireEach(t *testing.T, n *Namespace, count int) []*Lease {
	t.Helper()
	held := make([]*Lease, count)
	for i := range held {
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		held[i] = l
	}
	return held
}

// startDeadlineCalls starts every call at once against an unresponsive Redis, each under a
// context that ends at its own bound, and fails the test for a call that returns before its
// deadline or with an answer rather than a timeout; check, if not nil, sees what each call took
// and returned as well. The channel is closed when every call has returned.
func startDeadlineCalls(t *testing.T, calls []deadlineCall, check func(c deadlineCall, took time.Duration, err error)) <-chan struct{} {
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() {
			// The clock starts before the context, whose deadline is then at least bound
			// after start: started after it, a call that honours its deadline to the
			// nanosecond could measure short of bound by however long the goroutine was
			// descheduled in between.
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), c.bound)
			if c.cancelled {
				cancel()
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(c.bound, cancel)
			}
			defer cancel()
			err := c.run(ctx)
			took := time.Since(start)
			if took < c.bound {
				t.Errorf("%s returned after %s, before its own deadline %s: another caller's deadline cut its command", c.name, took, c.bound)
			}
			if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrNotOwned) {
				t.Errorf("%s with Redis unresponsive = %v, want a timeout, not an answer", c.name, err)
			}
			if check != nil {
				check(c, took, err)
			}
		})
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	return returned
}
