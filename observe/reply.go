package observe

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Reply is what the server answered to a Call, as far as the metrics need it.
type Reply struct {
	// Err is a transport, timeout or server error; a nil reply is not an error (set Nil).
	Err error
	// Nil is a nil reply: SET NX found the key taken, or a script returned false/nil.
	Nil bool
	// Int holds an integer reply when IsInt is set.
	Int   int64
	IsInt bool
}

// result is a reply read as an outcome of the call's operation.
type result uint8

const (
	resultIgnore   result = iota // NOSCRIPT (the client retries with EVAL, which is the operation), called off, or QUEUED
	resultSuccess                // acquired, renewed, released
	resultRejected               // busy, or not owned
	resultError                  // failed / error
)

// errQueued is the reply of a command queued in a MULTI block: not its outcome, which is its
// element of EXEC's reply.
var errQueued = errors.New("QUEUED")

func (r Reply) result(op opKind) result {
	switch {
	case r.Err != nil && (r.Err == errQueued || strings.HasPrefix(r.Err.Error(), "NOSCRIPT")):
		return resultIgnore
	case op != opAcquire && errors.Is(r.Err, context.Canceled):
		// The holder itself called off its renew or release (rueidislock cancels an
		// in-flight extend when the lock is let go): its own decision, not a failure of the
		// store. An acquire called off this way still ends its wait, as an error.
		return resultIgnore
	case r.Err != nil && op != opAcquire && strings.HasPrefix(r.Err.Error(), "WRONGTYPE"):
		// The compare of a renew or release met a value of another type under the lock's name
		// (another client replaced the key): it does not hold the holder's value, an answer
		// about ownership rather than a failure, as lease counts its own.
		return resultRejected
	case r.Err != nil:
		return resultError
	case r.Nil:
		return resultRejected
	case r.IsInt && op == opAcquire:
		// MSETNX-style acquires answer 1 or 0.
		if r.Int == 0 {
			return resultRejected
		}
		return resultSuccess
	case r.IsInt && r.Int <= 0:
		// 0: the value did not match; redsync answers -1 when the key is gone.
		return resultRejected
	}
	return resultSuccess
}

// Done records the reply of a call Begin recognised, once; the Call must not be used after.
// A nil Call is ignored, so adapters may call it unconditionally.
func (c *Call) Done(r Reply) {
	if c == nil {
		return
	}
	c.finish(r)
	if c.pooled {
		c.recycle()
	}
}

// Finish records the reply of a call BeginStringsOn recognised, once, and leaves c to its
// caller: it is Done for a Call that is not the Observer's. A nil Call is ignored.
func (c *Call) Finish(r Reply) {
	if c == nil {
		return
	}
	c.finish(r)
}

// finish is Done without returning the Call to the pool: for a Call on its hook's stack.
func (c *Call) finish(r Reply) {
	res := r.result(c.op)
	if res == resultIgnore {
		return
	}
	o := c.o
	end := o.now()
	switch c.op {
	case opDelete:
		c.deleted(res, end)
		return
	case opFlush:
		if res == resultSuccess {
			o.tracker.flushed(c.server, end)
		}
		return
	}
	// Once per namespace the key belongs to: each keeps its own state and series.
	for ns := c.ns; ns != nil; ns = o.nextNamespace(c.keys()[0], ns.idx+1) {
		c.ns = ns
		o.tracker.record(c, res, end)
	}
}

// deleted ends the holds of the keys a DEL or UNLINK removed, in every namespace they belong
// to. The reply counts removed keys, not which: when it is not zero, every key is taken as
// gone (a key that was not there was not held either).
func (c *Call) deleted(res result, end time.Time) {
	if res != resultSuccess {
		return
	}
	o := c.o
	for _, k := range c.keys() {
		for ns := o.namespaceOf(k); ns != nil; ns = o.nextNamespace(k, ns.idx+1) {
			o.tracker.deleted(ns, k, c.server, end)
		}
	}
}
