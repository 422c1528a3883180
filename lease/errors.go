package lease

import "errors"

// errEmptyToken: a release or renew was asked for without an owner token, which only a zero
// Lease (not one from Acquire) lacks. It is an error rather than a no-op, so that a missing
// token is never mistaken for a successful release.
var errEmptyToken = errors.New("lease: lock token required")

// errNilLease: Release or Renew on a nil *Lease, typically the result of a failed Acquire
// released before its error was checked.
var errNilLease = errors.New("lease: nil *Lease (Acquire failed, or it was never acquired)")

// errNilFunc: Do was given no function to run under the lock.
var errNilFunc = errors.New("lease: Do needs a function to run")

// errNilContext: a method that takes a context was given nil. (Release takes nil as
// context.Background: it only keeps the context's values, and refusing would leave the lock held.)
var errNilContext = errors.New("lease: nil context")

// Sentinel errors, for errors.Is.
var (
	// ErrBusy: another holder has the lock (after waiting, if the call waits).
	ErrBusy = errors.New("lease: lock busy")
	// ErrNotOwned: the lock key no longer holds this lease's token (it expired, or another
	// owner has it), so a release or renew did nothing.
	ErrNotOwned = errors.New("lease: lock not owned")
	// ErrAbandoned is the cause of a holder's context when the Abandon policy gave the lease up
	// after repeated renew failures, and what Release returns afterwards.
	ErrAbandoned = errors.New("lease: lock abandoned: renewal failed")
	// ErrMaxHoldExceeded is the cause of a holder's context when its lease reached
	// Policy.MaxHold: renewing stopped and the key is left to expire at its TTL. Release and
	// Renew return it afterwards.
	ErrMaxHoldExceeded = errors.New("lease: lock held past MaxHold: renewal stopped")
	// ErrExpired is the cause of the holder's context when a DisableRenewal lease reached its
	// validity's end (ValidUntil) without a renew: the key may belong to another owner from
	// then on. Renew returns it afterwards, extending nothing, wrapped with ErrNotOwned when
	// Redis says the key does not hold this lease's token; Release still deletes the key if it
	// holds this lease's token, and wraps it with ErrNotOwned when it does not.
	ErrExpired = errors.New("lease: lock expired: TTL passed without a renew")
	// ErrReleased: Release was already called for this lease. It is also the cause of the
	// holder's context after release.
	ErrReleased = errors.New("lease: lease already released")
	// ErrStaleFence: a fenced write was rejected because a newer lease already wrote.
	ErrStaleFence = errors.New("lease: fenced write rejected: a newer fence has written")
	// ErrNoFence: a fenced write was asked for without a fence token (fencing is off, or the
	// token is not positive).
	ErrNoFence = errors.New("lease: fence token required")
	// ErrInvalidKey: the key is empty; or (when a fence key is needed) contains '}' outside a
	// hash tag, so no companion key could share its Redis Cluster slot; or it would collide with
	// a companion key: it has the shape of another key's fence, write-fence or holder key
	// ("{job}:fence"), or (where it gets companions) it is a hash tag alone ("{job}"), whose
	// companions would be those of "job".
	ErrInvalidKey = errors.New("lease: invalid key")
	// ErrClosed: the Client was closed; it sends no more commands.
	ErrClosed = errors.New("lease: client closed")
	// ErrInvalidPolicy: a Policy or Options value is out of range.
	ErrInvalidPolicy = errors.New("lease: invalid policy")
	// ErrAlreadyDeclared: Client.Declare was called for a namespace name the Client has
	// declared already.
	ErrAlreadyDeclared = errors.New("lease: namespace already declared")
)
