package wire

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// attemptCtx is the bound of one call (BoundBy) on a parent that is never cancelled (its Done
// is nil, as context.Background's): its deadline, without context.WithDeadlineCause's price.
// That one allocates five times and arms a runtime timer for every call, about 1 µs: about 13%
// of the client's CPU in a profile of one contended key (docs/performance.md).
//
// The deadline holds without a timer: Deadline carries it to go-redis, which sets the socket
// deadline from it, and a Done asked for after the deadline is closed at once. A timer is
// armed only for a caller that may wait on Done (go-redis waiting for a pool connection, a
// command queued in the batcher, a backoff, the local mutex): the first Done arms one, taken
// from a pool of stopped timers, so that whoever selects on Done wakes at the deadline. Done is
// called on go-redis's path to a connection whether it waits or not, so in practice one pooled
// timer is reset and stopped per call (about 0.1 µs, no allocation).
type attemptCtx struct {
	parent   context.Context // Done() == nil
	deadline time.Time
	cause    error // the cause when the deadline ends it

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	err   error         // context.DeadlineExceeded or context.Canceled once it ended
	timer *deadlineTimer
}

func newAttemptCtx(parent context.Context, deadline time.Time, cause error) *attemptCtx {
	return &attemptCtx{parent: parent, deadline: deadline, cause: cause}
}

func (a *attemptCtx) Deadline() (time.Time, bool) { return a.deadline, true }

func (a *attemptCtx) Value(key any) any { return a.parent.Value(key) }

func (a *attemptCtx) Done() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil {
		a.done = make(chan struct{})
		switch {
		case a.err != nil:
			close(a.done)
		case a.passedLocked(): // closed it
		default:
			a.timer = armDeadlineTimer(a)
		}
	}
	return a.done
}

// Err reads no clock: like a standard context's, it is nil until Done is closed, which
// happens at the deadline only for a caller that asked for Done (the others read the deadline:
// DeadlinePassed). Reading the clock here cost about 2.5% of the client's CPU on one contended
// key, where every send checks Err first.
func (a *attemptCtx) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// cancelCause is what context.Cause would say of a standard context with this deadline and
// cause (context.Cause cannot see into other types: it would answer Err).
func (a *attemptCtx) cancelCause() error {
	err := a.Err()
	if err == context.DeadlineExceeded && a.cause != nil {
		return a.cause
	}
	return err
}

// passedLocked ends a when its deadline has passed, and reports whether it has ended.
func (a *attemptCtx) passedLocked() bool {
	if a.err == nil && !time.Now().Before(a.deadline) {
		a.endLocked(context.DeadlineExceeded)
	}
	return a.err != nil
}

// expire is the timer's end of a.
func (a *attemptCtx) expire() {
	a.mu.Lock()
	if a.err == nil {
		a.endLocked(context.DeadlineExceeded)
	}
	a.mu.Unlock()
}

// End is the CancelFunc of a: it ends a, as a standard context's cancel does.
func (a *attemptCtx) End() {
	a.mu.Lock()
	if a.err == nil {
		a.endLocked(context.Canceled)
	}
	a.mu.Unlock()
}

func (a *attemptCtx) endLocked(err error) {
	a.err = err
	if a.done != nil {
		close(a.done)
	}
	if a.timer != nil {
		a.timer.disarm()
		a.timer = nil
	}
}

// deadlineTimer is a reusable timer that ends the attemptCtx it is armed for.
type deadlineTimer struct {
	t   *time.Timer
	ctx atomic.Pointer[attemptCtx]
}

// deadlineTimers holds stopped timers: a stopped runtime timer is reset again for the price
// of a heap update, where a new one costs allocations too.
var deadlineTimers sync.Pool

func armDeadlineTimer(a *attemptCtx) *deadlineTimer {
	dt, _ := deadlineTimers.Get().(*deadlineTimer)
	if dt == nil {
		dt = &deadlineTimer{}
		dt.t = time.AfterFunc(time.Hour, dt.fire)
	}
	dt.ctx.Store(a)
	dt.t.Reset(time.Until(a.deadline))
	return dt
}

func (dt *deadlineTimer) fire() {
	if a := dt.ctx.Load(); a != nil {
		a.expire()
	}
}

// disarm stops dt and returns it to the pool, unless it has fired already: then its fire
// may still be running (it finds its context ended and does nothing), and it is not reused,
// so that it can never end a later call's context.
func (dt *deadlineTimer) disarm() {
	if dt.t.Stop() {
		dt.ctx.Store(nil)
		deadlineTimers.Put(dt)
	}
}

// Cause is context.Cause, which also sees into an attemptCtx.
func Cause(ctx context.Context) error {
	if a, ok := ctx.(*attemptCtx); ok {
		return a.cancelCause()
	}
	return context.Cause(ctx)
}
