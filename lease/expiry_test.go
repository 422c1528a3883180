package lease

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// A DisableRenewal lease whose work outlives its TTL ends at its lapse: the holder's context is
// cancelled with cause ErrExpired, lock_held stops counting it and ValidUntil reads zero, before
// anyone calls Release. A later Renew is refused and counted not_owned (it asks Redis, but
// extends nothing), and the Release after a second holder took the key reports both ErrNotOwned
// and ErrExpired (the stale release) and leaves the new owner's lock alone, so that lock_held
// never counts both holders of the key one after the other. Only the first lease is meant to
// expire: the second holder takes the key through a namespace of long leases, so that it still
// holds it when checked however slow the machine, and Redis is given all the time it needs to
// answer.
func TestUnrenewedLeaseEndsAtItsLapse(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		e := newEnvMode(t, sharedAddr, single)
		n := e.namespace(t, "approval", Policy{TTL: 200 * time.Millisecond, DisableRenewal: true,
			RenewTimeout: patient, AcquireTimeout: patient, ReleaseTimeout: patient})
		next := e.namespace(t, "successor", Policy{TTL: time.Minute, AcquireTimeout: patient, ReleaseTimeout: patient})
		key := uniqueKey(t)
		a, err := n.Acquire(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		lapse := a.ValidUntil()
		waitCancelled(t, a)
		if cause := context.Cause(a.Context()); !errors.Is(cause, ErrExpired) {
			t.Fatalf("holder context cause = %v, want ErrExpired", cause)
		}
		if now := time.Now(); now.Before(lapse) {
			t.Fatalf("holder context ended %s before the lapse", lapse.Sub(now))
		}
		if !a.ValidUntil().IsZero() {
			t.Errorf("ValidUntil after expiry = %v, want zero", a.ValidUntil())
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_held": 0})
		// The line is written once the lease's lock is released, after the context is cancelled.
		testkit.Eventually(t, 20*time.Second, "the expiry's warning", func() bool {
			return strings.Contains(e.logs.String(), "lock lease ended without renewal")
		})

		if err := a.Renew(context.Background()); !errors.Is(err, ErrExpired) {
			t.Errorf("Renew after expiry = %v, want ErrExpired", err)
		}
		testkit.Eventually(t, 20*time.Second, "the key's expiry", func() bool { return e.rdb.Exists(context.Background(), key).Val() == 0 })
		b, err := next.Acquire(context.Background(), key)
		if err != nil {
			t.Fatalf("second holder: %v", err)
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_held": 0, "lock_renewals_total/ok": 0, "lock_renewals_total/not_owned": 1})
		e.wantMetrics(t, "successor", map[string]float64{"lock_held": 1})

		err = a.Release(context.Background())
		if !errors.Is(err, ErrNotOwned) || !errors.Is(err, ErrExpired) {
			t.Fatalf("stale Release = %v, want both ErrNotOwned and ErrExpired", err)
		}
		if got := e.rdb.Get(context.Background(), key).Val(); got != b.token {
			t.Fatal("the second holder's lock did not survive the stale release")
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_held": 0, "lock_releases_total/not_owned": 1, "lock_releases_total/ok": 0})
		if err := b.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.wantMetrics(t, "successor", map[string]float64{"lock_held": 0, "lock_releases_total/ok": 1})
	})
}

// A Renew moves the lapse on: the lease outlives its first lapse and ends at the renewed one.
// The check is bookkeeping, not a race: it looks at the context only between the two lapses the
// lease itself reports, and skips the look if this machine was too slow to get there in time.
func TestRenewMovesTheLapse(t *testing.T) {
	e := newEnv(t, sharedAddr)
	const ttl = 1500 * time.Millisecond
	n := e.namespace(t, "approval", Policy{TTL: ttl, DisableRenewal: true})
	l, err := n.Acquire(context.Background(), uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	first := l.ValidUntil()
	time.Sleep(ttl / 2)
	if err := l.Renew(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := l.ValidUntil()
	if !second.After(first) {
		t.Fatalf("Renew did not move ValidUntil (%v, then %v)", first, second)
	}
	time.Sleep(time.Until(first) + 50*time.Millisecond)
	if live, now := l.Context().Err() == nil, time.Now(); now.Before(second) && !live {
		t.Fatalf("lease ended at its first lapse (cause %v) although a Renew moved it on by %s",
			context.Cause(l.Context()), second.Sub(first))
	}
	waitCancelled(t, l)
	if now := time.Now(); now.Before(second) {
		t.Fatalf("lease ended %s before its renewed lapse", second.Sub(now))
	}
	if cause := context.Cause(l.Context()); !errors.Is(cause, ErrExpired) {
		t.Fatalf("cause = %v, want ErrExpired", cause)
	}
	// The key may still be this lease's for the drift margin: Release deletes it then, or finds
	// it gone. Either way nothing is left behind.
	if err := l.Release(context.Background()); err != nil && !errors.Is(err, ErrNotOwned) {
		t.Fatal(err)
	}
	if e.rdb.Exists(context.Background(), l.key).Val() != 0 {
		t.Error("key left behind after Release")
	}
}

// A Renew answered "not owned" ends a DisableRenewal lease at once, with that cause: nothing
// else would end it before its lapse, and the key is already someone else's or gone.
func TestUnrenewedLeaseEndsWhenRenewFindsItGone(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "approval", Policy{TTL: time.Minute, DisableRenewal: true})
	key := uniqueKey(t)
	l, err := n.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.Del(context.Background(), key).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(context.Background()); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("Renew of a deleted key = %v, want ErrNotOwned", err)
	}
	if cause := context.Cause(l.Context()); !errors.Is(cause, ErrNotOwned) {
		t.Fatalf("holder context cause = %v, want ErrNotOwned", cause)
	}
	e.wantMetrics(t, "approval", map[string]float64{"lock_held": 0, "lock_renewals_total/not_owned": 1})
	if err := l.Release(context.Background()); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("Release = %v, want ErrNotOwned", err)
	}
	e.wantMetrics(t, "approval", map[string]float64{"lock_held": 0, "lock_releases_total/not_owned": 1})
}

// A handler with AddSource shows where the renewer's lines were decided (validity.go for an
// expiry), not the one function that writes them all after the lease's lock is released: every
// line pointed at renew.go's logLine.write.
func TestRenewerLinesShowWhereTheyWereDecided(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	logs := &testkit.SyncBuffer{}
	c, err := New(rdb, Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{AddSource: true}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	n, err := c.Declare("approval", Policy{TTL: 100 * time.Millisecond, DisableRenewal: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := n.Acquire(context.Background(), uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	waitCancelled(t, l)
	testkit.Eventually(t, 10*time.Second, "the expiry's log line", func() bool { return strings.Contains(logs.String(), "ended without renewal") })
	if line := logs.String(); !strings.Contains(line, "validity.go:") {
		t.Errorf("the expiry's line does not name validity.go as its source:\n%s", line)
	}
	_ = l.Release(context.Background())
}
