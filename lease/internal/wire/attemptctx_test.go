package wire

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errTestBound = errors.New("test bound")

// An attemptCtx whose deadline has passed closes a Done asked for afterwards at once, with its
// cause, and arms no timer for it; until then nothing reads the clock (Err is nil, as a
// standard context's is until its timer fires).
func TestAttemptCtxEndsAtDeadlineWithoutTimer(t *testing.T) {
	a := newAttemptCtx(context.Background(), time.Now().Add(-time.Nanosecond), errTestBound)
	if err := a.Err(); err != nil {
		t.Fatalf("Err before anyone asked for Done = %v, want nil", err)
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("Done asked for after the deadline is open")
	}
	if err := a.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err after the deadline = %v, want context.DeadlineExceeded", err)
	}
	if cause := Cause(a); cause != errTestBound {
		t.Errorf("cause after the deadline = %v, want the bound's own cause", cause)
	}
	if a.timer != nil {
		t.Error("a timer was armed for a context already past its deadline")
	}
}

// A caller waiting on Done wakes at the deadline: the first Done arms a timer. The timer that
// fired is not put back for reuse (its fire may still be running when it is stopped), so it
// can never end a later call's context.
func TestAttemptCtxWakesWaiterAtDeadline(t *testing.T) {
	a := newAttemptCtx(context.Background(), time.Now().Add(20*time.Millisecond), errTestBound)
	done := a.Done()
	a.mu.Lock()
	dt := a.timer
	a.mu.Unlock()
	if dt == nil {
		t.Fatal("Done armed no timer: a waiter would outlive the deadline")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Done still open 10s after a 20ms deadline")
	}
	if err, cause := a.Err(), Cause(a); err != context.DeadlineExceeded || cause != errTestBound {
		t.Errorf("after the deadline: Err = %v, cause = %v; want context.DeadlineExceeded and the bound's cause", err, cause)
	}
	if got := dt.ctx.Load(); got != a {
		t.Error("the timer that fired went back to the pool")
	}
	a.End() // after the end: changes nothing
	if err := a.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err after End of an expired context = %v, want context.DeadlineExceeded", err)
	}
}

// Ending the call (its CancelFunc) ends the context, as a standard context's cancel does, and
// stops its timer, which goes back to the pool detached from it.
func TestAttemptCtxEndStopsTimer(t *testing.T) {
	ctx, bound := BoundBy(context.Background(), time.Now().Add(time.Hour), errTestBound)
	a, ok := ctx.(*attemptCtx)
	if !ok {
		t.Fatalf("BoundBy on context.Background gave a %T, want an attemptCtx", ctx)
	}
	done := a.Done()
	dt := a.timer
	bound.End()
	select {
	case <-done:
	default:
		t.Fatal("Done open after the call's cancel")
	}
	if err := a.Err(); err != context.Canceled {
		t.Errorf("Err after cancel = %v, want context.Canceled", err)
	}
	if dt.ctx.Load() != nil || a.timer != nil {
		t.Error("the stopped timer still points at the ended context")
	}
	dt.fire() // a stale fire of a recycled timer
	if err := a.Err(); err != context.Canceled {
		t.Errorf("Err after a recycled timer's fire = %v, want context.Canceled still", err)
	}
}

// BoundBy keeps the standard context where something can cancel the caller's context, and the
// caller's own context where its deadline is the earlier.
func TestBoundByKeepsCancellableContexts(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	ctx, bound := BoundBy(parent, time.Now().Add(time.Hour), errTestBound)
	defer bound.End()
	if _, ok := ctx.(*attemptCtx); ok {
		t.Error("BoundBy on a cancellable context gave an attemptCtx, which would not see its cancellation")
	}
	stop()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause after the parent's cancel = %v, want context.Canceled", context.Cause(ctx))
	}

	early, stopEarly := context.WithTimeout(context.Background(), time.Minute)
	defer stopEarly()
	if ctx, _ := BoundBy(early, time.Now().Add(time.Hour), errTestBound); ctx != early {
		t.Error("BoundBy replaced a context whose deadline is earlier")
	}
}

// BenchmarkBoundBy is one call's bound as a lock cycle's command meets it: made, its Err
// checked (the batcher), its Done asked for (go-redis on the way to a connection), ended. The
// standard row is context.WithDeadlineCause, the attemptCtx row what BoundBy builds on a
// context that nothing cancels.
func BenchmarkBoundBy(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		bound func(time.Time) (context.Context, Bound)
	}{
		{"standard", func(d time.Time) (context.Context, Bound) {
			c, cancel := context.WithDeadlineCause(ctx, d, errTestBound)
			return c, cancelBound(cancel)
		}},
		{"attemptCtx", func(d time.Time) (context.Context, Bound) {
			return BoundBy(ctx, d, errTestBound)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, bound := bc.bound(time.Now().Add(2 * time.Second))
				_ = c.Err()
				select {
				case <-c.Done():
					b.Fatal("ended early")
				default:
				}
				bound.End()
			}
		})
	}
}
