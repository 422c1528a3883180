package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// acquireFencedScript takes the lock and its fence token in one step, so a lock is never held
// without its fence and a fence is never spent without the lock (and records the holder, when
// given a holder key).
//
// The fence is the server's time in microseconds, or one more than the fence key's value when
// that is not lower: fences of a key rise while its fence key lives (even if the clock steps
// back) and, through the clock, after it expired or was lost in a restart. A counter left by
// INCR-based versions is far below any time in microseconds, so fences never go backwards on
// upgrade. The fence key expires TTL + FenceRetention after the acquisition, so only recently
// acquired keys have one. Time in microseconds (≈ 1.8e15) is exact in Lua's doubles (2^53 ≈
// 9e15); %d writes it without an exponent.
//
// KEYS[1] lock key, KEYS[2] its fence key, KEYS[3] (optional) its holder key;
// ARGV[1] owner token, ARGV[2] TTL in ms, ARGV[3] the fence key's expiry in ms, ARGV[4] the
// holder description when KEYS[3] is given, recorded with the server's time of the acquisition
// in milliseconds after a tab (lockkeys.ParseHolder). Returns the new fence token (> 0), or 0 when
// someone else holds the lock.
//
// The fence key is read before the lock is set: a script that fails part way keeps what it
// wrote, so a fence key another client made a hash (WRONGTYPE) must fail the acquisition before
// the lock key holds a token that nobody would hold.
var acquireFencedScript = wire.NewScript(`
local last = tonumber(redis.call('get', KEYS[2]))
if not redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return 0
end
local now = redis.call('time')
if KEYS[3] then
	redis.call('set', KEYS[3], ARGV[4] .. '\t' .. string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)), 'PX', ARGV[2])
end
local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
if last and last >= fence then
	fence = last + 1
end
redis.call('set', KEYS[2], string.format('%d', fence), 'PX', ARGV[3])
return fence
`)

// acquireHolderScript takes an unfenced lock and records its holder in one step, with the
// server's time of the acquisition in milliseconds after a tab (lockkeys.ParseHolder).
// KEYS[1] lock key, KEYS[2] its holder key; ARGV[1] owner token, ARGV[2] TTL in ms,
// ARGV[3] holder description. Returns 1 when acquired, 0 when someone else holds the lock.
var acquireHolderScript = wire.NewScript(`
if not redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return 0
end
local now = redis.call('time')
redis.call('set', KEYS[2], ARGV[3] .. '\t' .. string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)), 'PX', ARGV[2])
return 1
`)

// errAcquireDeadline is the cause of an acquire's own deadline, telling it apart from the
// caller's context ending.
var errAcquireDeadline = errors.New("lease: acquire timeout")

// Acquire takes the lock on key, waiting for a busy lock with backoff and jitter until
// Policy.AcquireTimeout after the call (or ctx's end, if sooner) and then returning ErrBusy.
// When ctx ended the wait, the error also matches ctx's cause (context.Canceled, say). The
// deadline bounds the whole call, every round trip included: when Redis does not answer within
// it, Acquire returns an error (not ErrBusy) whose cause is the acquire timeout.
//
// ctx is also the parent of the lease's Context: cancelling it stops renewal (the key then
// expires after TTL unless released). Every acquired lease must be released with Release.
func (n *Namespace) Acquire(ctx context.Context, key string) (*Lease, error) {
	return n.acquire(ctx, key, true)
}

// TryAcquire makes one attempt: it returns ErrBusy at once when the lock is held. Use it for
// work that should be skipped, not delayed, when another replica is on it. The attempt is
// bounded by Policy.AcquireTimeout, like Acquire.
func (n *Namespace) TryAcquire(ctx context.Context, key string) (*Lease, error) {
	return n.acquire(ctx, key, false)
}

// checkKey refuses lock keys that would collide with companion keys (see companionClash) and,
// where the namespace writes companions, keys whose companions could not share their slot.
func (n *Namespace) checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty lock key in namespace %s", ErrInvalidKey, n.name)
	}
	companions := n.policy.Fencing || n.policy.RecordHolder
	if companions && !lockkeys.SameSlot(key) {
		return fmt.Errorf("%w: %q in namespace %s contains '}' outside a hash tag, so its fence and holder keys cannot share its cluster slot", ErrInvalidKey, key, n.name)
	}
	if clash := companionClash(key, companions); clash != "" {
		return fmt.Errorf("%w: lock key %q in namespace %s %s", ErrInvalidKey, key, n.name, clash)
	}
	return nil
}

func (n *Namespace) acquire(ctx context.Context, key string, wait bool) (*Lease, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	if err := n.checkKey(key); err != nil {
		return nil, err
	}
	start := time.Now()
	l, err := n.obtain(ctx, key, wait, start)
	n.m.acquireDone(start, err)
	return l, err
}

// unansweredAfter is how long a retry must have been in flight when the acquire deadline cut
// it for the acquire to report Redis's silence rather than ErrBusy (RetryBackoff, when longer).
// A retry sent just before the deadline and cut mid round trip leaves the lock as Redis last
// described it, busy; one that Redis left unanswered this long says Redis stopped answering, and
// ErrBusy would send an operator looking for a holder instead of at Redis. It is well above a
// round trip so that a client or Redis host busy with other work (stalls of tens of
// milliseconds, measured beside CPU hogs) is not read as an outage; a Redis that dies earlier in
// the wait than this is still reported, and the next acquire reports it in any case.
const unansweredAfter = 100 * time.Millisecond

// obtain makes the attempts, all within Policy.AcquireTimeout of start: the first round trip
// too, so that a frozen Redis cannot hold an acquire for go-redis's retries of read timeouts.
// ctx is the lease's parent context. A caller whose lock turns out busy (in Redis or in the
// local mutex) is counted in lock_waiters until it returns.
func (n *Namespace) obtain(ctx context.Context, key string, wait bool, start time.Time) (*Lease, error) {
	actx, bound := wire.BoundBy(ctx, start.Add(n.policy.AcquireTimeout), errAcquireDeadline)
	defer bound.End()
	waiting := false
	defer func() {
		if waiting {
			n.m.waitEnded()
		}
	}()
	if n.local != nil && !n.local.tryLock(key) {
		if !wait {
			return nil, n.busyError(nil, key)
		}
		waiting = true
		n.m.waitStarted()
		if !n.local.lock(actx, key) {
			return nil, n.busyError(actx, key)
		}
	}
	token := newToken()
	// Boxed once: the acquire's commands and later the renews and the release send them.
	keyArg, tokenArg := any(key), any(token)
	// movingAnswer is Redis's last answer when it said the slot is moving (TRYAGAIN, ASK, MOVED),
	// nil when its last answer was another.
	var movingAnswer error
	for {
		tried := time.Now()
		fence, ok, err := n.try(actx, key, keyArg, tokenArg)
		moving := err != nil && slotMoving(err)
		switch {
		case moving:
			movingAnswer = err
		case err == nil:
			movingAnswer = nil
		}
		if moving && wait && n.pause(actx) {
			continue
		}
		switch {
		case moving:
			err = fmt.Errorf("lease: acquire %q in namespace %s: its Redis Cluster slot is moving: %w", key, n.name, err)
		case err != nil && movingAnswer != nil && wire.DeadlinePassed(actx) && !errors.Is(ctx.Err(), context.Canceled):
			// The deadline cut a try after Redis had answered that the slot is moving (go-redis
			// backs off between its own retries of TRYAGAIN under the same deadline): Redis did
			// answer, and an operator should look at the reshard, not for an outage.
			err = fmt.Errorf("lease: acquire %q in namespace %s: its Redis Cluster slot was still moving at the acquire deadline: %w: %w",
				key, n.name, movingAnswer, err)
		case err != nil && waiting && wire.DeadlinePassed(actx) && time.Since(tried) < max(n.policy.RetryBackoff, unansweredAfter):
			// The wait ran out during a retry's round trip: the lock was busy at Redis's last
			// answer.
			err = n.busyError(actx, key)
		case err != nil && errors.Is(ctx.Err(), context.Canceled):
			// The caller called the acquire off (before it was sent, or during its round
			// trip): that, not Redis's silence, is what ended it.
			err = fmt.Errorf("lease: acquire %q in namespace %s: cancelled by the caller: %w", key, n.name, withCause(ctx, err))
		case err != nil && wire.DeadlinePassed(actx):
			err = fmt.Errorf("lease: acquire %q in namespace %s: no answer from Redis before the acquire deadline: %w",
				key, n.name, err)
		case err != nil:
			err = fmt.Errorf("lease: acquire %q in namespace %s: %w", key, n.name, err)
		case ok:
			return n.newLease(ctx, leaseID{key, token, keyArg, tokenArg}, fence, tried), nil
		case !wait:
			err = n.busyError(nil, key)
		default:
			if !waiting {
				waiting = true
				n.m.waitStarted()
			}
			if n.pause(actx) {
				continue
			}
			err = n.busyError(actx, key)
		}
		if n.local != nil {
			n.local.unlock(key)
		}
		return nil, err
	}
}

// withCause is err joined with the cause of ctx's cancellation when the caller gave one
// (context.WithCancelCause), so that the error matches both.
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}

// try makes one acquisition attempt; keyArg and tokenArg are key and the token, boxed.
func (n *Namespace) try(ctx context.Context, key string, keyArg, tokenArg any) (fence int64, ok bool, err error) {
	c := n.client
	ttl := n.ttlMs
	switch {
	case n.policy.Fencing && n.policy.RecordHolder:
		fence, err = c.runScript(ctx, acquireFencedScript, 3, keyArg, lockkeys.Fence(key), lockkeys.Holder(key),
			tokenArg, ttl, n.fenceKeyExpiry(), c.holder)
	case n.policy.Fencing:
		fence, err = c.runScript(ctx, acquireFencedScript, 2, keyArg, lockkeys.Fence(key), tokenArg, ttl, n.fenceKeyExpiry())
	case n.policy.RecordHolder:
		acquired, err := c.runScript(ctx, acquireHolderScript, 2, keyArg, lockkeys.Holder(key), tokenArg, ttl, c.holder)
		return 0, acquired == 1, err
	default:
		ok, err = c.setNX(ctx, keyArg, tokenArg, ttl)
		return 0, ok, err
	}
	return fence, fence > 0, err
}

// whileSlotMoves runs op, and runs it again after RetryBackoff (pause) for as long as Redis
// answers that the keys' slot is being migrated (slotMoving: TRYAGAIN while a command's keys sit
// on two masters between two batches of a reshard) and ctx allows. Redis ran nothing then, and
// the split ends with the reshard's next batch; failing instead would fail a release, renew or
// fenced write that is fine. Acquire has its own loop: its wait and its error say more.
func (n *Namespace) whileSlotMoves(ctx context.Context, op func() error) error {
	err := op()
	for err != nil && slotMoving(err) && n.pause(ctx) {
		err = op()
	}
	return err
}

// pause sleeps RetryBackoff plus jitter; false when ctx ended first.
func (n *Namespace) pause(ctx context.Context) bool {
	b := n.policy.RetryBackoff
	d := b + time.Duration(rand.Int64N(int64(b)/2+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// busyError is ErrBusy naming key and the namespace, joined with the caller's cause when the
// caller's context (rather than the acquire deadline) ended the wait; actx is nil for a single
// attempt.
func (n *Namespace) busyError(actx context.Context, key string) error {
	if actx != nil {
		// Every waiter comes here once actx ended or its deadline passed; in the second case the
		// context's timer fires a moment later and settles the cause.
		<-actx.Done()
		if cause := wire.Cause(actx); cause != nil && cause != errAcquireDeadline {
			return fmt.Errorf("%w: acquire %q in namespace %s: %w", ErrBusy, key, n.name, cause)
		}
	}
	return &busyKeyError{key: key, namespace: n.name}
}

// busyKeyError is ErrBusy naming the key and the namespace, formatted only when read. A failed
// TryAcquire is the common answer on a contended key, where most attempts fail: fmt.Errorf
// there costs four allocations and about 4% of the client's CPU (a profile of one contended
// key, docs/performance.md), for a message most callers never print.
type busyKeyError struct{ key, namespace string }

func (e *busyKeyError) Error() string {
	return fmt.Sprintf("%v: acquire %q in namespace %s", ErrBusy, e.key, e.namespace)
}

func (e *busyKeyError) Unwrap() error { return ErrBusy }

// slotMoving reports whether err is Redis Cluster's answer to a command on a slot being
// migrated that go-redis gave up retrying: TRYAGAIN (the lock key and its fence or holder key
// are split between the two masters for a moment), or ASK or MOVED after go-redis's
// MaxRedirects. An acquire that waits tries again after RetryBackoff, as Redis asks: a reshard
// is routine, and failing the acquire would fail the caller's job while the lock may be free
// (docs/reliability.md, the reshard drill).
func slotMoving(err error) bool {
	if redis.IsTryAgainError(err) {
		return true
	}
	if _, ok := redis.IsAskError(err); ok {
		return true
	}
	_, ok := redis.IsMovedError(err)
	return ok
}
