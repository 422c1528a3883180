package lease

import (
	"context"
	"time"
)

// boundBy returns ctx limited to deadline, with cause as the context's cause when that deadline
// ends it. When ctx already ends by then it is returned as is, so a caller that brings a
// shorter deadline pays for no second timer.
//
// Every Redis call of the library goes through such a bound: go-redis retries a timed-out
// command up to MaxRetries times, each time up to ReadTimeout, so a call on a context without a
// deadline could otherwise wait for a frozen Redis far longer than the policy says.
func boundBy(ctx context.Context, deadline time.Time, cause error) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && !d.After(deadline) {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, deadline, cause)
}

// deadlinePassed reports whether ctx has ended or its deadline has passed. A command cut by the
// deadline can return (go-redis sets the socket deadline from it) a moment before the context's
// own timer marks it done, so ctx.Err() alone would misread that moment.
func deadlinePassed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
