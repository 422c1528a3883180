package lease

import (
	"fmt"
	"math"
	"time"
)

// RenewFailurePolicy says what a holder does when its lease cannot be renewed.
type RenewFailurePolicy int

const (
	// Abandon (the default) gives the lease up after MaxRenewFailures consecutive failed renews,
	// at once when a renew is answered "not owned", and, while renews fail, at the lease's
	// ValidUntil (a margin of 1% of the TTL + 2ms before the earliest moment the key can
	// expire): renewing stops, the holder's context is cancelled with cause ErrAbandoned, the
	// abandonment is counted and release is skipped, so that a newer owner's lock is never
	// dropped. For work where overlap corrupts state.
	//
	// That deadline is kept by a timer in this process, so it holds while the process is
	// scheduled: a holder paused by the OS or the GC past ValidUntil is cancelled only when it
	// runs again, possibly after the key expired and another replica took the lock. Writes that
	// must never overlap need the fence token checked by the store (Policy.Fencing, FencedSet, Guard).
	Abandon RenewFailurePolicy = iota
	// Continue logs and counts each failed renew and keeps the work running; renewing stops
	// only when a renew is answered "not owned". For idempotent work where continuity matters
	// more than a short overlap.
	Continue
)

func (p RenewFailurePolicy) String() string {
	return constantName(p, "RenewFailurePolicy", "abandon", "continue")
}

// ReleaseMode says what Release does with the lock key.
type ReleaseMode int

const (
	// Explicit (the default) deletes the key on release (compare-and-delete), for per-item
	// locks such as one job's state transition.
	Explicit ReleaseMode = iota
	// HoldUntilExpiry never deletes: release only stops renewing, and the key's expiry rotates
	// ownership. For per-loop locks such as reconcilers, where releasing early would let a
	// second replica run the same cycle.
	HoldUntilExpiry
)

func (m ReleaseMode) String() string {
	return constantName(m, "ReleaseMode", "explicit", "hold_until_expiry")
}

// constantName is the name of v among constants numbered from 0 (iota) in the order of names,
// or typ(v) for a value that is none of them.
func constantName[T ~int](v T, typ string, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Policy is the declared behaviour of one lock namespace. Zero fields take the default each
// field names.
type Policy struct {
	// TTL is the lease length (PX of the lock key). Default 30s.
	TTL time.Duration
	// RenewInterval is the renew cadence while a lease is held. Default TTL/3; must be shorter
	// than TTL.
	RenewInterval time.Duration
	// RenewTimeout bounds each renew call. Default 2s, or RenewInterval if that is shorter.
	RenewTimeout time.Duration
	// DisableRenewal turns the background renewer off: the key lasts TTL unless Renew is
	// called. For critical sections known to be much shorter than TTL. The lease ends at
	// ValidUntil unless a Renew moves it: the holder's context is cancelled with cause
	// ErrExpired and lock_held stops counting it (Release still deletes the key if it is
	// still this lease's; Renew extends nothing and counts not_owned). A holder paused past
	// that moment can still write: fence the writes.
	DisableRenewal bool
	// MaxRenewFailures is the number of consecutive failed renews after which the Abandon policy
	// abandons the lease. Default 3. The key's expiry bounds it too: with the default
	// RenewInterval of TTL/3, the lease is abandoned before a third attempt could start.
	MaxRenewFailures int
	// OnRenewFailure is Abandon (default) or Continue.
	OnRenewFailure RenewFailurePolicy
	// ReleaseMode is Explicit (default) or HoldUntilExpiry: what Release does with the key.
	ReleaseMode ReleaseMode
	// AcquireTimeout bounds how long Acquire and Do wait for a busy lock. Default 2s.
	AcquireTimeout time.Duration
	// RetryBackoff is the pause between acquire attempts; each pause adds a random jitter of
	// up to half of it, so that waiters do not retry in lockstep. Default 25ms.
	RetryBackoff time.Duration
	// ReleaseTimeout bounds Release, which runs detached from the caller's cancellation so
	// that a cancelled request still frees its lock. Default 2s.
	ReleaseTimeout time.Duration
	// LocalMutex adds an in-process mutex per key in front of Redis: goroutines of one process
	// queue locally instead of polling Redis (two-layer exclusion).
	LocalMutex bool
	// Fencing takes a fence token in the same script as the lock: the Redis server's time in
	// microseconds, or one more than the last fence of the key when that is not lower. Fences
	// of a key rise across owners, across the fence key's expiry and across a Redis restart.
	Fencing bool
	// FenceRetention is how long the fence key outlives the lock: acquisition and every renew
	// set its expiry to TTL + FenceRetention. Only keys held or acquired within that window have
	// a fence key, so their number stays bounded; while it exists it keeps fences rising even if
	// the server's clock steps back by less than TTL + FenceRetention, and FencedSet applies
	// writes only while it holds the writer's fence. Default 1 minute.
	FenceRetention time.Duration
	// WriteFenceRetention, when positive, lets a Guard's write-fence records expire that long
	// (plus a minute) after their last claim or write, and makes the Guard reject, as stale, a
	// claim or write of a key without a record whose fence was issued more than
	// WriteFenceRetention ago. It must exceed the longest time a lease holds a lock without writing the keys it
	// guards. Zero (the default) keeps the records without expiry, as for fences not taken by
	// this library.
	WriteFenceRetention time.Duration
	// RecordHolder stores a description of the holder (Options.Holder: by default host name
	// and process ID) in the lock's holder key ("{job:42}:holder" for "job:42", in its cluster
	// slot), written in the same script as the lock, renewed and deleted with it. The
	// exporter's ACL can read it; it never contains the token.
	RecordHolder bool
	// MaxHold, when positive, bounds how long a lease is held: once MaxHold has passed since the
	// acquisition, the renewer stops renewing, the holder's context is cancelled with cause
	// ErrMaxHoldExceeded, lock_max_hold_exceeded_total is counted and an error is logged; the
	// key is left to expire at its TTL (deleting it could let a second holder in while this one
	// may still be working). It catches holders whose work stalled while their renewer kept the
	// lock alive. Zero (the default) holds for as long as the lease is renewed. It needs the
	// renewer: a DisableRenewal lease already ends at its TTL (ErrExpired).
	MaxHold time.Duration
}

// Defaults of Policy fields left zero (each field's comment names its default too).
const (
	defaultTTL              = 30 * time.Second
	defaultRenewTimeout     = 2 * time.Second
	defaultMaxRenewFailures = 3
	defaultAcquireTimeout   = 2 * time.Second
	defaultRetryBackoff     = 25 * time.Millisecond
	defaultReleaseTimeout   = 2 * time.Second
	defaultFenceRetention   = time.Minute
)

// withDefaults fills zero fields and rejects values that cannot work.
func (p Policy) withDefaults() (Policy, error) {
	if p.TTL == 0 {
		p.TTL = defaultTTL
	}
	if p.RenewInterval == 0 {
		p.RenewInterval = p.TTL / 3
	}
	if p.RenewTimeout == 0 {
		p.RenewTimeout = min(defaultRenewTimeout, p.RenewInterval)
	}
	if p.MaxRenewFailures == 0 {
		p.MaxRenewFailures = defaultMaxRenewFailures
	}
	if p.AcquireTimeout == 0 {
		p.AcquireTimeout = defaultAcquireTimeout
	}
	if p.RetryBackoff == 0 {
		p.RetryBackoff = defaultRetryBackoff
	}
	if p.ReleaseTimeout == 0 {
		p.ReleaseTimeout = defaultReleaseTimeout
	}
	if p.FenceRetention == 0 {
		p.FenceRetention = defaultFenceRetention
	}
	switch {
	case p.TTL < time.Millisecond:
		return p, fmt.Errorf("%w: TTL %s must be at least 1ms", ErrInvalidPolicy, p.TTL)
	case p.RenewInterval < 0 || p.RenewInterval >= p.TTL:
		return p, fmt.Errorf("%w: RenewInterval %s must be positive and shorter than TTL %s", ErrInvalidPolicy, p.RenewInterval, p.TTL)
	case p.RenewTimeout < 0:
		return p, fmt.Errorf("%w: RenewTimeout %s must be positive", ErrInvalidPolicy, p.RenewTimeout)
	case p.MaxRenewFailures < 0:
		return p, fmt.Errorf("%w: MaxRenewFailures %d must be positive", ErrInvalidPolicy, p.MaxRenewFailures)
	case p.AcquireTimeout < 0:
		return p, fmt.Errorf("%w: AcquireTimeout %s must be positive", ErrInvalidPolicy, p.AcquireTimeout)
	case p.RetryBackoff < 0:
		return p, fmt.Errorf("%w: RetryBackoff %s must be positive", ErrInvalidPolicy, p.RetryBackoff)
	case p.ReleaseTimeout < 0:
		return p, fmt.Errorf("%w: ReleaseTimeout %s must be positive", ErrInvalidPolicy, p.ReleaseTimeout)
	case p.FenceRetention < 0:
		return p, fmt.Errorf("%w: FenceRetention %s must be positive", ErrInvalidPolicy, p.FenceRetention)
	case p.Fencing && p.TTL > math.MaxInt64-p.FenceRetention:
		// The fence key's expiry is TTL + FenceRetention: past the largest Duration it would
		// wrap to a negative PX, which Redis refuses on every fenced acquire.
		return p, fmt.Errorf("%w: TTL %s + FenceRetention %s exceeds the longest duration", ErrInvalidPolicy, p.TTL, p.FenceRetention)
	case p.WriteFenceRetention < 0 || p.WriteFenceRetention > 0 && p.WriteFenceRetention < time.Millisecond:
		return p, fmt.Errorf("%w: WriteFenceRetention %s must be at least 1ms (zero keeps write-fence records)", ErrInvalidPolicy, p.WriteFenceRetention)
	case p.WriteFenceRetention > math.MaxInt64-writeFenceSlack:
		return p, fmt.Errorf("%w: WriteFenceRetention %s + %s exceeds the longest duration", ErrInvalidPolicy, p.WriteFenceRetention, writeFenceSlack)
	case p.MaxHold < 0:
		return p, fmt.Errorf("%w: MaxHold %s must be positive (zero: no bound)", ErrInvalidPolicy, p.MaxHold)
	case p.MaxHold > 0 && p.DisableRenewal:
		return p, fmt.Errorf("%w: MaxHold %s bounds the renewer, which DisableRenewal turns off", ErrInvalidPolicy, p.MaxHold)
	case p.OnRenewFailure != Abandon && p.OnRenewFailure != Continue:
		return p, fmt.Errorf("%w: unknown OnRenewFailure %d", ErrInvalidPolicy, int(p.OnRenewFailure))
	case p.ReleaseMode != Explicit && p.ReleaseMode != HoldUntilExpiry:
		return p, fmt.Errorf("%w: unknown ReleaseMode %d", ErrInvalidPolicy, int(p.ReleaseMode))
	}
	return p, nil
}
