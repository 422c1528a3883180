package lease

import (
	"context"
	"fmt"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"sync"
	"time"
)

// releaseScript deletes the lock only while it still holds the caller's token, so a stale
// holder can never drop a newer owner's lock. KEYS[1] lock key, KEYS[2…] companions deleted
// with it (the holder key); ARGV[1] owner token. Returns 1 when deleted, 0 when not owned.
var releaseScript = newScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('del', unpack(KEYS))
	return 1
end
return 0
`)

type leaseState uint8

const (
	stateHeld leaseState = iota
	stateReleased
	stateAbandoned
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
	acquired time.Time
	ctx      context.Context
	cancel   context.CancelCauseFunc

	mu       sync.Mutex
	state    leaseState
	timer    *time.Timer // the renewer; nil when renewal is disabled
	failures int         // consecutive failed renews
	// validUntil is the earliest moment the key can expire: TTL after the start of the last
	// successful acquire or renew (Redis ran the command after it started). Zero once a renew
	// was answered "not owned". See validity.go.
	validUntil time.Time
	renewing   sync.WaitGroup
}

// newLease returns the lease taken by an attempt that started at tried.
func (n *Namespace) newLease(parent context.Context, id leaseID, fence int64, tried time.Time) *Lease {
	l := &Lease{ns: n, leaseID: id, fence: fence, validUntil: tried.Add(n.policy.TTL)}
	l.ctx, l.cancel = context.WithCancelCause(parent)
	l.acquired = n.m.holdStarted()
	if !n.policy.DisableRenewal {
		// A timer rather than a goroutine per lease: a renewer goroutine exists only while a
		// renew is in flight, so short critical sections cost no goroutine at all.
		l.mu.Lock()
		l.timer = time.AfterFunc(n.policy.RenewInterval, l.renewTick)
		l.mu.Unlock()
	}
	return l
}

// Key returns the lock key.
func (l *Lease) Key() string { return l.key }

// Fence returns the lease's fence token, or 0 when the namespace does not fence. Pass it to
// FencedSet or store it with every write (see the package guide's SQL pattern).
func (l *Lease) Fence() int64 { return l.fence }

// Context is the holder's context. It is cancelled with cause ErrAbandoned when the Abandon policy
// gives the lease up, with cause ErrReleased on Release, and when Acquire's ctx ends; read the
// reason with context.Cause.
func (l *Lease) Context() context.Context {
	if l.ctx == nil {
		return context.Background()
	}
	return l.ctx
}

// Release ends the lease: it stops the renewer, cancels the lease's Context and, in Explicit
// mode, deletes the key if it still holds this lease's token (ErrNotOwned otherwise). In
// HoldUntilExpiry mode the key is left to expire. After an abandonment nothing is deleted and
// Release returns ErrAbandoned. Release runs detached from ctx's cancellation (ctx's values are
// kept), bounded by Policy.ReleaseTimeout, so that a cancelled request still frees its lock.
func (l *Lease) Release(ctx context.Context) error {
	n := l.ns
	if n == nil || l.token == "" {
		return errEmptyToken
	}
	l.mu.Lock()
	switch l.state {
	case stateReleased:
		l.mu.Unlock()
		return ErrReleased
	case stateAbandoned:
		l.state = stateReleased
		l.mu.Unlock()
		n.m.releaseDone(releaseSkipped)
		l.unlockLocal()
		return ErrAbandoned
	}
	l.state = stateReleased
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	// Cancelling first cuts an in-flight renew short instead of waiting out its timeout.
	l.cancel(ErrReleased)
	l.renewing.Wait()

	var err error
	if n.policy.Release == HoldUntilExpiry {
		n.m.releaseDone(releaseSkipped)
	} else {
		err = n.release(ctx, l.leaseID)
	}
	n.m.holdEnded(l.acquired)
	l.unlockLocal()
	return err
}

func (l *Lease) unlockLocal() {
	if l.ns.local != nil {
		l.ns.local.unlock(l.key)
	}
}

// release runs the compare-and-delete and counts its outcome.
func (n *Namespace) release(ctx context.Context, id leaseID) error {
	key := id.key
	if id.token == "" {
		return errEmptyToken
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, n.policy.ReleaseTimeout)
	defer cancel()
	c := n.client
	var deleted int64
	var err error
	if n.policy.RecordHolder {
		deleted, err = c.runScript(ctx, releaseScript, 2, id.keyArg, lockkeys.Holder(key), id.tokenArg)
	} else {
		deleted, err = c.runScript(ctx, releaseScript, 1, id.keyArg, id.tokenArg)
	}
	switch {
	case err != nil:
		n.m.releaseDone(releaseError)
		return fmt.Errorf("lease: release %q in namespace %s: %w", key, n.name, err)
	case deleted == 0:
		n.m.releaseDone(releaseNotOwned)
		return fmt.Errorf("%w: release %q in namespace %s", ErrNotOwned, key, n.name)
	}
	n.m.releaseDone(releaseOK)
	return nil
}
