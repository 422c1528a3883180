package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A lease that reaches MaxHold is ended with its own cause: the holder's context is cancelled
// with ErrMaxHoldExceeded (not ErrAbandoned), renewing stops, the key is left in place and
// expires at its TTL, and /metrics and the log tell it from a renew-failure abandonment.
// MaxHold spans twenty renew intervals, so that the renewer's ticks before it fit in even when a
// starved machine runs this process a fraction of the time.
func TestMaxHoldCancelsWithItsOwnCauseAndLetsTheKeyExpire(t *testing.T) {
	e := newEnv(t, sharedAddr)
	stalls := stallMeter(t)
	const ttl, maxHold = 800 * time.Millisecond, 2 * time.Second
	n := e.namespace(t, "zombies", Policy{TTL: ttl, RenewInterval: 100 * time.Millisecond, MaxHold: maxHold})
	ctx := context.Background()
	key := uniqueKey(t)
	start := time.Now()
	l, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Context().Done():
	case <-time.After(maxHold + stalls.Slack(callSlack)):
		t.Fatalf("holder context still live %s after the acquire, MaxHold %s", time.Since(start), maxHold)
	}
	cancelledAt := time.Now()
	if took := cancelledAt.Sub(start); took < maxHold {
		t.Errorf("cancelled after %s, before MaxHold %s", took, maxHold)
	}
	cause := context.Cause(l.Context())
	if !errors.Is(cause, ErrMaxHoldExceeded) || errors.Is(cause, ErrAbandoned) {
		t.Fatalf("cause = %v, want ErrMaxHoldExceeded", cause)
	}
	renewals := e.metric(t, "lock_renewals_total", namespaceLabel, "zombies", "outcome", "ok")
	if renewals < 2 {
		t.Errorf("%v ok renewals before MaxHold, want the renewer to have run", renewals)
	}
	// The key stays: the holder may still be working. It is not renewed again, so it expires
	// within a TTL of the last renewal.
	if n, err := e.rdb.Exists(ctx, key).Result(); err != nil || n != 1 {
		t.Errorf("key exists = %d, %v right after MaxHold; want it left to its TTL", n, err)
	}
	deadline := cancelledAt.Add(ttl + stalls.Slack(callSlack))
	for e.rdb.Exists(ctx, key).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatalf("key still there %s after MaxHold, TTL %s: renewing did not stop", time.Since(cancelledAt), ttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := e.metric(t, "lock_renewals_total", namespaceLabel, "zombies", "outcome", "ok"); got != renewals {
		t.Errorf("renewals went on after MaxHold: %v, then %v", renewals, got)
	}
	if err := l.Release(ctx); !errors.Is(err, ErrMaxHoldExceeded) {
		t.Errorf("Release after MaxHold = %v, want ErrMaxHoldExceeded", err)
	}
	if err := l.Renew(ctx); !errors.Is(err, ErrReleased) {
		t.Errorf("Renew after Release = %v, want ErrReleased", err)
	}
	e.wantMetrics(t, "zombies", map[string]float64{
		"lock_max_hold_exceeded_total": 1, "lock_abandoned_total": 0, "lock_held": 0, "lock_held_seconds": 1,
		"lock_releases_total/skipped": 1, "lock_releases_total/ok": 0,
	})
	logs := e.logs.String()
	if !strings.Contains(logs, "MaxHold") || !strings.Contains(logs, "reason=max_hold") || strings.Contains(logs, "abandoned") {
		t.Errorf("log does not tell a MaxHold end from an abandonment:\n%s", logs)
	}
	if strings.Contains(logs, l.token) {
		t.Error("the log carries the lock token")
	}
}

// MaxHold must be positive and needs the renewer it stops.
func TestMaxHoldPolicyChecks(t *testing.T) {
	for _, p := range []Policy{{MaxHold: -time.Second}, {MaxHold: time.Minute, DisableRenewal: true}} {
		if _, err := p.withDefaults(); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%+v: %v, want ErrInvalidPolicy", p, err)
		}
	}
}
