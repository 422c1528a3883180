package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// renewScript extends the lock only while it still holds the caller's token, so a stale holder
// can never extend a newer owner's lock. KEYS[1] lock key; ARGV[1] owner token, ARGV[2] TTL in
// ms. Returns 1 when extended, 0 when not owned (expired, or taken by another owner).
const renewScript = `
if redis.call('get', KEYS[1]) == ARGV[1] then
	return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
`

// errRenewTimeout is the cause of a renew's own deadline.
var errRenewTimeout = errors.New("lease: renew timeout")

// Renew extends the lease to a full TTL from now, as the background renewer does; use it when
// renewal is disabled or at points of the work that must not outlive the lease. It returns
// ErrNotOwned when the key no longer holds this lease's token. Like a background renew, it is
// bounded by Policy.RenewTimeout. The attempt is counted in lock_renewals_total; it does not
// change the renewer's failure count.
func (l *Lease) Renew(ctx context.Context) error {
	n := l.ns
	if n == nil || l.token == "" {
		return ErrEmptyToken
	}
	l.mu.Lock()
	state := l.state
	l.mu.Unlock()
	switch state {
	case stateReleased:
		return ErrReleased
	case stateAbandoned:
		return ErrAbandoned
	}
	ctx, cancel := boundBy(ctx, time.Now().Add(n.policy.RenewTimeout), errRenewTimeout)
	defer cancel()
	owned, err := n.renew(ctx, l.key, l.token)
	n.countRenew(owned, err)
	switch {
	case err != nil:
		return fmt.Errorf("lease: renew %q in namespace %s: %w", l.key, n.name, err)
	case !owned:
		return fmt.Errorf("%w: renew %q in namespace %s", ErrNotOwned, l.key, n.name)
	}
	return nil
}

// renew runs the compare-and-pexpire.
func (n *Namespace) renew(ctx context.Context, key, token string) (owned bool, err error) {
	c := n.client
	extended, err := c.runScript(ctx, c.scripts.renew, []string{key}, token, n.policy.TTL.Milliseconds())
	return extended == 1, err
}

func (n *Namespace) countRenew(owned bool, err error) {
	if n.m == nil {
		return
	}
	switch {
	case err != nil:
		n.m.renewFailed.Inc()
	case !owned:
		n.m.renewNotOwned.Inc()
	default:
		n.m.renewOK.Inc()
	}
}

// renewTick is one run of the background renewer; it re-arms the timer while the lease is kept.
func (l *Lease) renewTick() {
	l.mu.Lock()
	if l.state != stateHeld || l.ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	l.renewing.Add(1)
	l.mu.Unlock()
	defer l.renewing.Done()

	n := l.ns
	p := &n.policy
	start := time.Now()
	ctx, cancel := context.WithTimeout(l.ctx, p.RenewTimeout)
	owned, err := n.renew(ctx, l.key, l.token)
	cancel()

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != stateHeld || l.ctx.Err() != nil {
		// Released or cancelled while the renew was in flight: its outcome no longer matters.
		return
	}
	n.countRenew(owned, err)
	switch {
	case err != nil:
		l.failures++
		if p.OnRenewFailure == Fence && l.failures >= p.MaxRenewFailures {
			l.abandonLocked(err)
			return
		}
		n.client.logger.LogAttrs(context.Background(), slog.LevelWarn, "lock renewal failed",
			slog.String(namespaceLabel, n.name), slog.String("key", l.key),
			slog.String("policy", p.OnRenewFailure.String()),
			slog.Int("consecutive_failures", l.failures), slog.Int("max_renew_failures", p.MaxRenewFailures),
			slog.Any("error", err))
	case !owned:
		// Ownership is definitively gone: nothing left to renew under either policy.
		if p.OnRenewFailure == Fence {
			l.abandonLocked(ErrNotOwned)
			return
		}
		n.client.logger.LogAttrs(context.Background(), slog.LevelWarn, "lock renewal found the lock not owned; renewing stops, work continues",
			slog.String(namespaceLabel, n.name), slog.String("key", l.key), slog.String("policy", p.OnRenewFailure.String()))
		return
	default:
		l.failures = 0
	}
	l.timer.Reset(max(0, p.RenewInterval-time.Since(start)))
}

// abandonLocked gives the lease up under the Fence policy; l.mu must be held.
func (l *Lease) abandonLocked(reason error) {
	n := l.ns
	l.state = stateAbandoned
	if n.m != nil {
		n.m.abandoned.Inc()
		n.m.held.Dec()
		n.m.heldSeconds.Observe(time.Since(l.acquired).Seconds())
	}
	n.client.logger.LogAttrs(context.Background(), slog.LevelError, "lock abandoned: holder context cancelled, release will be skipped",
		slog.String(namespaceLabel, n.name), slog.String("key", l.key),
		slog.Int("consecutive_failures", l.failures), slog.Any("error", reason))
	l.cancel(ErrAbandoned)
}
