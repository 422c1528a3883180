package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// releaseScript deletes the lock only while it still holds the caller's token, so a stale
// holder can never drop a newer owner's lock. KEYS[1] lock key, KEYS[2…] companions deleted
// with it (the holder key); ARGV[1] owner token. Returns 1 when deleted, 0 when not owned (a key
// another client replaced with a value of another type is not owned either: GET's WRONGTYPE,
// caught by pcall, is the one error that means not owned; others are raised again).
var releaseScript = wire.NewScript(`
local v = redis.pcall('get', KEYS[1])
if type(v) == 'table' and not string.find(v.err, '^WRONGTYPE') then
	return redis.error_reply(v.err)
end
if v == ARGV[1] then
	redis.call('del', unpack(KEYS))
	return 1
end
return 0
`)

// Release ends the lease: it stops the renewer, cancels the lease's Context and, in Explicit
// mode, deletes the key if it still holds this lease's token (ErrNotOwned otherwise). In
// HoldUntilExpiry mode the key is left to expire. After an abandonment nothing is deleted and
// Release returns ErrAbandoned; after Policy.MaxHold ended the hold, likewise with
// ErrMaxHoldExceeded. After a DisableRenewal lease expired (its Context ended with ErrExpired),
// Release still deletes the key if it holds this lease's token, and otherwise returns an error
// that is both ErrNotOwned and ErrExpired. Release runs detached from ctx's cancellation (ctx's values are
// kept), bounded by Policy.ReleaseTimeout, so that a cancelled request still frees its lock.
//
// A nil ctx is taken as context.Background(); a nil Lease returns an error.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil {
		return errNilLease
	}
	if ctx == nil {
		ctx = context.Background()
	}
	n := l.ns
	if n == nil || l.token == "" {
		return errEmptyToken
	}
	l.mu.Lock()
	switch l.state {
	case stateReleased:
		l.mu.Unlock()
		return ErrReleased
	case stateAbandoned, stateMaxHold:
		// Given up already: the key is left to its TTL, since deleting it now could let a second
		// holder in while this one may still be working.
		err := ErrAbandoned
		if l.state == stateMaxHold {
			err = ErrMaxHoldExceeded
		}
		l.state = stateReleased
		l.mu.Unlock()
		n.m.releaseDone(releaseSkipped)
		l.unlockLocal()
		return err
	}
	// An expired lease (DisableRenewal, past its lapse) ended its hold already; its key may
	// still hold this token for the drift margin, so the release still deletes it then.
	expired := l.state == stateExpired
	l.state = stateReleased
	if l.timer != nil {
		l.timer.Stop()
	}
	renewing := l.renewDone
	l.mu.Unlock()
	deadline := time.Now().Add(n.policy.ReleaseTimeout)
	// Cancelling ends a renew still queued in the sender; one on the wire runs until its own
	// deadline (go-redis does not cut a read on cancellation), so the release does not wait for
	// it first: the two scripts are atomic, and whichever runs second finds the key gone or
	// deletes it, which is the release either way. The renew's outcome no longer counts.
	l.cancel(ErrReleased)

	var err error
	if n.policy.ReleaseMode == HoldUntilExpiry {
		n.m.releaseDone(releaseSkipped)
	} else {
		err = n.release(ctx, l.leaseID, deadline)
	}
	if expired {
		if errors.Is(err, ErrNotOwned) {
			err = fmt.Errorf("%w (%w)", err, ErrExpired)
		}
		l.unlockLocal()
		return err
	}
	// The renewer's last log line and metrics, when it settles within the release's bound;
	// past it (Redis not answering), Release returns on time and the renewer ends at its own
	// deadline, logging and counting nothing more.
	if renewing != nil {
		waitUntil(renewing, deadline)
	}
	n.m.holdEnded(l)
	l.unlockLocal()
	return err
}

// waitUntil waits until done is closed or deadline has passed.
func waitUntil(done <-chan struct{}, deadline time.Time) {
	select {
	case <-done:
		return
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

func (l *Lease) unlockLocal() {
	if l.ns.local != nil {
		l.ns.local.unlock(l.key)
	}
}

// release runs the compare-and-delete, bounded by deadline, and counts its outcome.
func (n *Namespace) release(ctx context.Context, id leaseID, deadline time.Time) error {
	key := id.key
	if id.token == "" {
		return errEmptyToken
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	// Nothing cancels ctx now: wire.BoundBy gives its cheapest bound, no cancel chain and no
	// timer unless something waits (it is on every lock cycle's path).
	ctx, bound := wire.BoundBy(ctx, deadline, nil)
	defer bound.End()
	// A slot being migrated is waited out until ReleaseTimeout: the key would otherwise stay
	// until its TTL and keep the next holder waiting.
	var deleted int64
	err := n.whileSlotMoves(ctx, func() (err error) {
		deleted, err = n.deleteIfOwned(ctx, id)
		return err
	})
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

// deleteIfOwned runs the release script once: 1 when it deleted the key, 0 when another token
// held it.
func (n *Namespace) deleteIfOwned(ctx context.Context, id leaseID) (int64, error) {
	if n.policy.RecordHolder {
		return n.client.runScript(ctx, releaseScript, 2, id.keyArg, lockkeys.Holder(id.key), id.tokenArg)
	}
	return n.client.runScript(ctx, releaseScript, 1, id.keyArg, id.tokenArg)
}
