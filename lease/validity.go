package lease

import (
	"log/slog"
	"time"
)

// driftMargin is how much earlier than the key's earliest expiry this process stops counting
// on the lease: 1% of the TTL, as Redlock allows for the drift between this process's clock
// rate and Redis's, plus 2ms. It covers clock rate, not a pause of this process (see
// ValidUntil).
func driftMargin(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// lapseLocked is when the lease stops being valid by the library's clock: the drift margin
// before the earliest moment the key can expire. The Abandon policy abandons a lease whose
// renews fail at its lapse at the latest. l.mu must be held.
func (l *Lease) lapseLocked() time.Time {
	return l.validUntil.Add(-driftMargin(l.ns.policy.TTL))
}

// ValidUntil is the moment until which the lease is valid by the library's own conservative
// clock: TTL after the last successful acquire or renew was *sent* (not answered: Redis may
// have run the command at any moment in between), less a drift margin of 1% of the TTL + 2ms.
// Only a successful renew moves it forward; a failed one leaves it where it was. It is the
// zero time once the lease is released, abandoned or expired, or a renew was answered "not
// owned". A DisableRenewal lease ends there: its Context is cancelled with cause ErrExpired.
//
// Check it right before a side effect that must not happen without the lock:
//
//	if !time.Now().Before(l.ValidUntil()) {
//		return errLeaseLapsed // do not write; the key may already belong to another owner
//	}
//
// The check is only as good as this process's scheduling: a process paused (GC, CPU
// starvation, SIGSTOP) between the check and the write can still write after the key expired.
// No client-side clock can close that gap; a fence token checked by the store (FencedSet, or
// the SQL guard in docs/lease.md) is what rejects such a write.
func (l *Lease) ValidUntil() time.Time {
	if l == nil {
		return time.Time{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateHeld || l.validUntil.IsZero() {
		return time.Time{}
	}
	return l.lapseLocked()
}

// expireTick ends a DisableRenewal lease at its lapse, or, when a Renew has moved the lapse
// on since the timer was set, waits for the new one.
func (l *Lease) expireTick() {
	l.mu.Lock()
	if l.state != stateHeld {
		l.mu.Unlock()
		return
	}
	if wait := time.Until(l.lapseLocked()); !l.validUntil.IsZero() && wait > 0 {
		l.timer.Reset(wait)
		l.mu.Unlock()
		return
	}
	line := l.expireLocked(ErrExpired)
	l.mu.Unlock()
	line.write(l.ns.client.logger)
}

// expireLocked ends the hold of a DisableRenewal lease that is no longer valid (cause ErrExpired
// at its lapse, ErrNotOwned when a Renew found the key gone) and returns the line to log; l.mu
// must be held. The key is not deleted here: Release does that if it is still this lease's.
func (l *Lease) expireLocked(cause error) logLine {
	n := l.ns
	l.state = stateExpired
	n.m.holdEnded(l)
	l.cancel(cause)
	return newLogLine(slog.LevelWarn, "lock lease ended without renewal: holder context cancelled",
		slog.String(namespaceLabel, n.name), slog.String("key", l.key), slog.Any("error", cause))
}
