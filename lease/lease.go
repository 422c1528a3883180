package lease

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

type leaseState uint8

const (
	stateHeld leaseState = iota
	stateReleased
	stateAbandoned
	stateMaxHold // Policy.MaxHold ended the hold; the key is left to its TTL
	stateExpired // a DisableRenewal lease reached its validity's end without a renew
)

// leaseID names a lease's lock: its key and owner token, and both boxed once as command
// arguments, so that renews and the release box neither again.
type leaseID struct {
	key, token       string
	keyArg, tokenArg any
}

// Lease is one held lock. Its methods are safe for concurrent use.
type Lease struct {
	ns *Namespace
	leaseID
	fence    int64
	acquired time.Time // when the hold started, set by nsMetrics.holdStarted (zero without metrics)
	ctx      context.Context
	cancel   context.CancelCauseFunc
	// maxHoldAt is when Policy.MaxHold ends the hold: MaxHold after the start of the acquire
	// attempt that took the lock. Zero without MaxHold.
	maxHoldAt time.Time
	// prevHeld and nextHeld link the namespace's held leases (heldList), guarded by its mutex.
	prevHeld, nextHeld *Lease

	mu    sync.Mutex
	state leaseState
	// timer runs the renewer, or, when renewal is disabled, ends the lease at its lapse.
	timer    *time.Timer
	failures int // consecutive failed renews
	// validUntil is the earliest moment the key can expire: TTL after the start of the last
	// successful acquire or renew (Redis ran the command after it started). Zero once a renew
	// was answered "not owned". See validity.go.
	validUntil time.Time
	// renewDone is closed when the renew in flight has settled (counted, logged); nil while
	// none is in flight. Release waits on it, within its own ReleaseTimeout.
	renewDone chan struct{}
}

// newLease returns the lease taken by an attempt that started at tried.
func (n *Namespace) newLease(parent context.Context, id leaseID, fence int64, tried time.Time) *Lease {
	l := &Lease{ns: n, leaseID: id, fence: fence, validUntil: tried.Add(n.policy.TTL)}
	l.ctx, l.cancel = context.WithCancelCause(parent)
	n.m.holdStarted(l)
	if n.policy.DisableRenewal {
		// Nothing renews the key, so the lease ends at its lapse unless Renew moves it: a holder
		// whose work outlives the TTL learns it from its context, as under the renewer.
		l.mu.Lock()
		l.timer = time.AfterFunc(time.Until(l.lapseLocked()), l.expireTick)
		l.mu.Unlock()
	} else {
		first := n.policy.RenewInterval
		if n.policy.MaxHold > 0 {
			l.maxHoldAt = tried.Add(n.policy.MaxHold)
			first = min(first, time.Until(l.maxHoldAt))
		}
		// A timer rather than a goroutine per lease: a renewer goroutine exists only while a
		// renew is in flight, so short critical sections cost no goroutine at all.
		l.mu.Lock()
		l.timer = time.AfterFunc(first, l.renewTick)
		l.mu.Unlock()
	}
	return l
}

// Key returns the lock key.
func (l *Lease) Key() string {
	if l == nil {
		return ""
	}
	return l.key
}

// Fence returns the lease's fence token, or 0 when the namespace does not fence. Pass it to
// FencedSet or store it with every write (see the package guide's SQL pattern).
func (l *Lease) Fence() int64 {
	if l == nil {
		return 0
	}
	return l.fence
}

// Context is the holder's context. It is cancelled with cause ErrAbandoned when the Abandon policy
// gives the lease up, with cause ErrMaxHoldExceeded when the lease reaches Policy.MaxHold, with
// cause ErrExpired when a DisableRenewal lease reaches ValidUntil without a renew, with cause
// ErrReleased on Release, and when Acquire's ctx ends; read the reason with context.Cause.
func (l *Lease) Context() context.Context {
	if l == nil || l.ctx == nil {
		return context.Background()
	}
	return l.ctx
}

// Format prints the lease as its namespace, key and fence, whatever the verb (%v, %+v, %#v,
// %s): the default formatting of the struct would print its owner token, a capability that
// must not reach a log line. Printing a nil or zero Lease is safe too.
func (l *Lease) Format(f fmt.State, verb rune) {
	if l == nil {
		_, _ = io.WriteString(f, "<nil>")
		return
	}
	_, _ = fmt.Fprintf(f, "lease{namespace: %q, key: %q, fence: %d}", l.namespaceName(), l.key, l.fence)
}

// LogValue is the lease as a log/slog value: its namespace, key and fence, never its token.
func (l *Lease) LogValue() slog.Value {
	if l == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(slog.String(namespaceLabel, l.namespaceName()), slog.String("key", l.key),
		slog.Int64("fence", l.fence))
}

func (l *Lease) namespaceName() string {
	if l.ns == nil {
		return ""
	}
	return l.ns.name
}
