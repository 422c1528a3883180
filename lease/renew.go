package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/lease/internal/wire"
)

// renewScript extends the lock only while it still holds the caller's token, so a stale holder
// can never extend a newer owner's lock. It extends the lock's companions with it: the holder
// key expires with the lock, and the fence key FenceRetention after it, so that a fence key
// lives as long as its lease can (FencedSet rejects every write once it is gone).
//
// A fence key lost while the lock still holds the token (evicted under a maxmemory policy, or
// deleted by another client) is written again with the lease's fence: while the lock holds the
// token no newer lease of it can have been issued, so that fence is still the newest, and
// without its fence key the holder's FencedSet would be refused to the end of the hold. A fence
// key that exists is only extended, whatever it holds (an operator may have raised it). The
// lock is extended first: in a script, a write that needs memory is refused under maxmemory
// (noeviction) only before the script's first write.
//
// KEYS[1] lock key, KEYS[2…] companions, the fence key last when there is one; ARGV[1] owner
// token, ARGV[2] TTL in ms, ARGV[3…] the companions' expiries in ms (KEYS[i] gets ARGV[i+1]),
// then, with a fence key, the lease's fence. Returns 1 when extended, 0 when not owned
// (expired, or taken by another owner, also when another client replaced the key with a value
// of another type: GET's WRONGTYPE, caught by pcall, is the one error that means not owned;
// others are raised again).
var renewScript = wire.NewScript(`
local v = redis.pcall('get', KEYS[1])
if type(v) == 'table' and not string.find(v.err, '^WRONGTYPE') then
	return redis.error_reply(v.err)
end
if v ~= ARGV[1] then
	return 0
end
redis.call('pexpire', KEYS[1], ARGV[2])
local fence = ARGV[#KEYS + 2]
for i = 2, #KEYS do
	if redis.call('pexpire', KEYS[i], ARGV[i + 1]) == 0 and fence and i == #KEYS then
		redis.call('set', KEYS[i], fence, 'PX', ARGV[i + 1])
	end
end
return 1
`)

// ownsScript tells whether the lock still holds the caller's token, without extending or
// returning it (the token of another holder never leaves Redis). KEYS[1] lock key; ARGV[1]
// owner token. Returns 1 when it does, 0 when not (a key of another type: not owned).
var ownsScript = wire.NewScript(`
local v = redis.pcall('get', KEYS[1])
if type(v) == 'table' and not string.find(v.err, '^WRONGTYPE') then
	return redis.error_reply(v.err)
end
if v == ARGV[1] then
	return 1
end
return 0
`)

// errRenewTimeout is the cause of a renew's own deadline.
var errRenewTimeout = errors.New("lease: renew timeout")

// Renew extends the lease to a full TTL from now, as the background renewer does; use it when
// renewal is disabled or at points of the work that must not outlive the lease. It returns
// ErrNotOwned when the key no longer holds this lease's token (which ends a DisableRenewal
// lease). Like a background renew, it is bounded by Policy.RenewTimeout. The attempt is counted
// in lock_renewals_total (unless ctx was cancelled: the caller called it off); it does not
// change the renewer's failure count.
//
// Once a DisableRenewal lease has ended (at ValidUntil, see ErrExpired) Renew no longer extends
// the key, but still asks Redis whether it holds this lease's token, as Release does: when it
// does not (the key expired, or another owner took it), the error is both ErrNotOwned and
// ErrExpired; when it does (Redis's expiry comes up to the drift margin after ValidUntil), the
// error is ErrExpired. Both count as not_owned: the lease was over before the renew, whichever
// side of the margin Redis was on.
func (l *Lease) Renew(ctx context.Context) error {
	if l == nil {
		return errNilLease
	}
	if ctx == nil {
		return errNilContext
	}
	n := l.ns
	if n == nil || l.token == "" {
		return errEmptyToken
	}
	l.mu.Lock()
	state := l.state
	l.mu.Unlock()
	if state != stateHeld {
		return l.renewEnded(ctx, state)
	}
	start := time.Now()
	rctx, bound := wire.BoundBy(ctx, start.Add(n.policy.RenewTimeout), errRenewTimeout)
	defer bound.End()
	owned, err := n.renew(rctx, l.leaseID, l.fence)
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		// A renew its caller called off is the caller's decision, not a failure of the store
		// (observe does not count one either); its deadline passing is a failure.
		n.m.renewDone(owned, err)
	}
	switch {
	case err != nil:
		return fmt.Errorf("lease: renew %q in namespace %s: %w", l.key, n.name, err)
	case !owned:
		l.mu.Lock()
		l.validUntil = time.Time{}
		var line logLine
		if n.policy.DisableRenewal && l.state == stateHeld {
			// Nothing else would end it: the lease is over, as at its lapse.
			line = l.expireLocked(ErrNotOwned)
		}
		l.mu.Unlock()
		line.write(n.client.logger)
		return fmt.Errorf("%w: renew %q in namespace %s", ErrNotOwned, l.key, n.name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == stateExpired {
		// The lapse passed while the renew was on the way: the holder's context has ended, and a
		// renewed key does not bring it back. The key lapses at its new expiry, or at Release.
		return ErrExpired
	}
	// Sent at start at the earliest, so the key lives at least until start+TTL. A renew that
	// lost the race with a not-owned answer (validUntil zero) does not revive the lease. A
	// DisableRenewal lease's timer finds the later lapse when it fires.
	if v := start.Add(n.policy.TTL); !l.validUntil.IsZero() && v.After(l.validUntil) {
		l.validUntil = v
	}
	return nil
}

// renewEnded answers a Renew of a lease whose hold has ended, by how it ended.
func (l *Lease) renewEnded(ctx context.Context, state leaseState) error {
	switch state {
	case stateReleased:
		return ErrReleased
	case stateAbandoned:
		return ErrAbandoned
	case stateMaxHold:
		return ErrMaxHoldExceeded
	}
	return l.renewAfterExpiry(ctx)
}

// renewAfterExpiry answers a Renew of a DisableRenewal lease whose hold has ended: the holder's
// context is cancelled and lock_held no longer counts it, so the key is not extended. Redis is
// asked whether the key still holds the lease's token, so that a stale holder learns it is not
// the owner, and is counted so, as its Release would be. A holder whose key still holds its
// token is refused too, and counted not_owned: it renewed after its lease ended, the timing
// symptom not_owned stands for, and the count does not depend on whether Redis had reclaimed
// the key within the drift margin.
func (l *Lease) renewAfterExpiry(ctx context.Context) error {
	n := l.ns
	rctx, bound := wire.BoundBy(ctx, time.Now().Add(n.policy.RenewTimeout), errRenewTimeout)
	defer bound.End()
	owned, err := n.client.runScript(rctx, ownsScript, 1, l.keyArg, l.tokenArg)
	if err == nil || !errors.Is(ctx.Err(), context.Canceled) {
		n.m.renewDone(false, err)
	}
	switch {
	case err != nil:
		return fmt.Errorf("lease: renew %q in namespace %s: %w (%w)", l.key, n.name, ErrExpired, err)
	case owned == 0:
		return fmt.Errorf("%w: renew %q in namespace %s (%w)", ErrNotOwned, l.key, n.name, ErrExpired)
	}
	return fmt.Errorf("%w: renew %q in namespace %s: the lease ended at its lapse, the key is not extended", ErrExpired, l.key, n.name)
}

// renew runs the compare-and-pexpire, waiting out a slot being migrated until ctx ends
// (whileSlotMoves): a renew failed by it would count towards abandoning a lease that is fine.
func (n *Namespace) renew(ctx context.Context, id leaseID, fence int64) (owned bool, err error) {
	err = n.whileSlotMoves(ctx, func() (err error) {
		owned, err = n.renewOnce(ctx, id, fence)
		return err
	})
	return owned, err
}

// renewOnce runs the compare-and-pexpire script once; fence is the lease's, written again to a
// fence key that was lost while the lock held the lease's token.
func (n *Namespace) renewOnce(ctx context.Context, id leaseID, fence int64) (owned bool, err error) {
	c := n.client
	var extended int64
	switch p := &n.policy; {
	case p.Fencing && p.RecordHolder:
		extended, err = c.runScript(ctx, renewScript, 3, id.keyArg, lockkeys.Holder(id.key), lockkeys.Fence(id.key),
			id.tokenArg, n.ttlMs, n.ttlMs, n.fenceKeyExpiry(), fence)
	case p.Fencing:
		extended, err = c.runScript(ctx, renewScript, 2, id.keyArg, lockkeys.Fence(id.key), id.tokenArg, n.ttlMs, n.fenceKeyExpiry(), fence)
	case p.RecordHolder:
		extended, err = c.runScript(ctx, renewScript, 2, id.keyArg, lockkeys.Holder(id.key), id.tokenArg, n.ttlMs, n.ttlMs)
	default:
		extended, err = c.runScript(ctx, renewScript, 1, id.keyArg, id.tokenArg, n.ttlMs)
	}
	return extended == 1, err
}

// errValidityEnded is the reason logged when the Abandon policy abandons a lease because the
// key may expire before a renew can succeed.
var errValidityEnded = errors.New("lease: validity ends before a renew could succeed")

// renewTick is one run of the background renewer; it re-arms the timer while the lease is kept.
//
// Under the Abandon policy the holder's context should end before another replica can take the
// lock, not only after MaxRenewFailures failures: while renews fail, the renewer also abandons
// the lease at its lapse (see lapseLocked), and no renew runs past it. The timer firing on time
// is what makes that hold; a starved or paused process is abandoned late, which is why writes
// carry fence tokens.
//
// Log lines are decided under l.mu and written once it is released, so that a slow log handler
// never holds the lease's lock (an abandoned holder's context is cancelled before its line is
// written).
func (l *Lease) renewTick() {
	n := l.ns
	p := &n.policy
	start := time.Now()

	l.mu.Lock()
	if l.state != stateHeld || l.ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	if p.MaxHold > 0 && !start.Before(l.maxHoldAt) {
		line := l.maxHoldLocked()
		l.mu.Unlock()
		line.write(n.client.logger)
		return
	}
	lapse := l.lapseLocked()
	if p.OnRenewFailure == Abandon && l.failures > 0 && !start.Before(lapse) {
		line := l.abandonLocked(errValidityEnded)
		l.mu.Unlock()
		line.write(n.client.logger)
		return
	}
	done := make(chan struct{})
	l.renewDone = done
	l.mu.Unlock()

	// A renew that is still unanswered at the lapse is given up. A tick that comes after the
	// lapse with no failure behind it (this process was paused) still asks Redis: an ok answer
	// proves the key was never free, and any other outcome abandons the lease below.
	deadline := start.Add(p.RenewTimeout)
	if p.OnRenewFailure == Abandon && start.Before(lapse) && lapse.Before(deadline) {
		deadline = lapse
	}
	ctx, cancel := context.WithDeadline(l.ctx, deadline)
	owned, err := n.renew(ctx, l.leaseID, l.fence)
	cancel()

	l.mu.Lock()
	line := l.settleRenewLocked(owned, err, start, lapse)
	l.renewDone = nil
	l.mu.Unlock()
	line.write(n.client.logger)
	// Closed only after the log line: once Release has waited for the renewer, everything the
	// renewer did, its log included, has happened.
	close(done)
}

// settleRenewLocked applies the outcome of the renew that started at start: it counts it,
// abandons the lease or re-arms the timer, and returns the line to log. l.mu must be held.
func (l *Lease) settleRenewLocked(owned bool, err error, start, lapse time.Time) logLine {
	n := l.ns
	p := &n.policy
	abandons := p.OnRenewFailure == Abandon
	if l.state != stateHeld || l.ctx.Err() != nil {
		// Released or cancelled while the renew was in flight: its outcome no longer matters.
		return logLine{}
	}
	n.m.renewDone(owned, err)
	var line logLine
	switch {
	case err != nil:
		l.failures++
		if abandons && (l.failures >= p.MaxRenewFailures || !time.Now().Before(lapse)) {
			return l.abandonLocked(err)
		}
		line = newLogLine(slog.LevelWarn, "lock renewal failed",
			slog.String(namespaceLabel, n.name), slog.String("key", l.key),
			slog.String("policy", p.OnRenewFailure.String()),
			slog.Int("consecutive_failures", l.failures), slog.Int("max_renew_failures", p.MaxRenewFailures),
			slog.Any("error", err))
	case !owned:
		// Ownership is definitively gone: nothing left to renew under either policy, and the
		// lease is no longer valid by any clock.
		l.validUntil = time.Time{}
		if abandons {
			return l.abandonLocked(ErrNotOwned)
		}
		return newLogLine(slog.LevelWarn, "lock renewal found the lock not owned; renewing stops, work continues",
			slog.String(namespaceLabel, n.name), slog.String("key", l.key), slog.String("policy", p.OnRenewFailure.String()))
	default:
		l.failures = 0
		if v := start.Add(p.TTL); !l.validUntil.IsZero() && v.After(l.validUntil) {
			l.validUntil = v
		}
	}
	next := start.Add(p.RenewInterval)
	if lapse := l.lapseLocked(); abandons && l.failures > 0 && lapse.Before(next) {
		next = lapse
	}
	if p.MaxHold > 0 && l.maxHoldAt.Before(next) {
		next = l.maxHoldAt
	}
	l.timer.Reset(max(0, time.Until(next)))
	return line
}

// abandonLocked gives the lease up under the Abandon policy and returns the line to log; l.mu
// must be held.
func (l *Lease) abandonLocked(reason error) logLine {
	n := l.ns
	l.state = stateAbandoned
	n.m.leaseAbandoned()
	n.m.holdEnded(l)
	l.cancel(ErrAbandoned)
	return newLogLine(slog.LevelError, "lock abandoned: holder context cancelled, release will be skipped",
		slog.String(namespaceLabel, n.name), slog.String("key", l.key),
		slog.Int("consecutive_failures", l.failures), slog.Any("error", reason))
}

// maxHoldLocked ends a hold that reached Policy.MaxHold and returns the line to log; l.mu must
// be held. Renewing stops and the holder's context is cancelled with its own cause, but the key
// is not deleted: the holder may still be working (its writes carry the fence), and deleting
// the key would let a second holder in beside it. The key expires at its TTL.
func (l *Lease) maxHoldLocked() logLine {
	n := l.ns
	l.state = stateMaxHold
	n.m.maxHoldExceeded()
	n.m.holdEnded(l)
	l.cancel(ErrMaxHoldExceeded)
	return newLogLine(slog.LevelError, "lock held past MaxHold: holder context cancelled, renewal stopped, key left to expire at its TTL",
		slog.String(namespaceLabel, n.name), slog.String("key", l.key), slog.String("reason", "max_hold"),
		slog.Duration("max_hold", n.policy.MaxHold))
}

// logLine is a log record decided while l.mu is held and written after it is released.
type logLine struct {
	level slog.Level
	msg   string
	attrs []slog.Attr
	pc    uintptr // where it was decided: the record's source, not write's
}

// newLogLine is a line decided by its caller, whose place a handler with AddSource shows.
func newLogLine(level slog.Level, msg string, attrs ...slog.Attr) logLine {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	return logLine{level: level, msg: msg, attrs: attrs, pc: pcs[0]}
}

func (r logLine) write(logger *slog.Logger) {
	ctx := context.Background()
	if r.msg == "" || !logger.Enabled(ctx, r.level) {
		return
	}
	rec := slog.NewRecord(time.Now(), r.level, r.msg, r.pc)
	rec.AddAttrs(r.attrs...)
	_ = logger.Handler().Handle(ctx, rec)
}
