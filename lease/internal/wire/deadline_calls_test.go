package wire

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// deadlineCall is one caller of the per-caller deadline tests (commands sent in pipelines): what it
// sends and the deadline it brings.
type deadlineCall struct {
	name  string
	bound time.Duration // the caller's own deadline
	run   func(ctx context.Context) error
}

// deadlineCalls are eight SET NX commands alternating between a short and a long deadline, two
// scripts run under the caller's deadline, and two scripts that, as the library's release does,
// ignore the caller's context and bring a bound of their own: an attemptCtx, on a context
// nothing cancels.
func deadlineCalls(t *testing.T, s *Sender) []deadlineCall {
	const ownBound = 300 * time.Millisecond
	var calls []deadlineCall
	for i := range 8 {
		bound := []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}[i%2]
		calls = append(calls, deadlineCall{name: fmt.Sprintf("set/%d", i), bound: bound, run: func(ctx context.Context) error {
			_, err := setNX(ctx, s, uniqueKey(t))
			return err
		}})
	}
	for i := range 2 {
		calls = append(calls, deadlineCall{name: fmt.Sprintf("script/%d", i), bound: 200 * time.Millisecond, run: func(ctx context.Context) error {
			_, err := s.Run(ctx, delIfEqualScript, 1, uniqueKey(t), "v")
			return err
		}})
	}
	for i := range 2 {
		calls = append(calls, deadlineCall{name: fmt.Sprintf("owned/%d", i), bound: ownBound, run: func(context.Context) error {
			ctx, bound := BoundBy(context.Background(), time.Now().Add(ownBound), nil)
			defer bound.End()
			_, err := s.Run(ctx, delIfEqualScript, 1, uniqueKey(t), "v")
			return err
		}})
	}
	return calls
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
			defer cancel()
			err := c.run(ctx)
			took := time.Since(start)
			if took < c.bound {
				t.Errorf("%s returned after %s, before its own deadline %s: another caller's deadline cut its command", c.name, took, c.bound)
			}
			if err == nil {
				t.Errorf("%s with Redis unresponsive answered, want a timeout", c.name)
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
