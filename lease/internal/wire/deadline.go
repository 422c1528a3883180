package wire

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// BoundBy returns ctx limited to deadline, with cause as the context's cause when that deadline
// ends it. When ctx already ends by then it is returned as is, so a caller that brings a
// shorter deadline pays for no second timer, and when nothing cancels ctx (context.Background,
// say) the bound is an attemptCtx, which arms a timer only for a caller that may wait. Read
// the cause of the returned context with Cause, and End the Bound when the call returns.
//
// Every Redis call of the library goes through such a bound: go-redis retries a timed-out
// command up to MaxRetries times, each time up to ReadTimeout, so a call on a context without a
// deadline could otherwise wait for a frozen Redis far longer than the policy says.
func BoundBy(ctx context.Context, deadline time.Time, cause error) (context.Context, Bound) {
	if d, ok := ctx.Deadline(); ok && !d.After(deadline) {
		return ctx, nothingToEnd
	}
	if ctx.Done() == nil {
		// Nothing cancels ctx: the bound needs no cancel chain, and no timer unless someone
		// waits (attemptCtx).
		a := newAttemptCtx(ctx, deadline, cause)
		return a, a
	}
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, cause)
	return ctx, cancelBound(cancel)
}

// Bound is what BoundBy made, for its caller to End when its call returns (defer bound.End()):
// an attemptCtx, or a standard context's CancelFunc. An interface rather than a func value, so
// that ending an attemptCtx costs no method-value allocation (two per lock cycle otherwise).
type Bound interface{ End() }

type cancelBound context.CancelFunc

func (f cancelBound) End() { f() }

var nothingToEnd = cancelBound(func() {})

// DeadlinePassed reports whether ctx has ended or its deadline has passed. A command cut by the
// deadline can return (go-redis sets the socket deadline from it) a moment before the context's
// own timer marks it done, so ctx.Err() alone would misread that moment.
func DeadlinePassed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// callerErr is the error of cmd, sent on the caller's behalf (in a batch, or by the coalescing
// leader), for the caller whose context is ctx. The send's socket deadline can be this caller's
// own and fire a moment before its context's timer: the command was then cut by the caller's
// deadline, so the answer is the context's.
func callerErr(ctx context.Context, cmd redis.Cmder) error {
	err := cmd.Err()
	if err != nil && DeadlinePassed(ctx) {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}
