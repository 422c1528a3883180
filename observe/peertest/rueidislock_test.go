package peertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockwatch/lockwatch/observe/rueidisobserve"
)

// rueidislock keys are PREFIX:i:NAME for i < 2×KeyMajority−1 (3 by default).
const rueidisPattern = "lw:*:jobs:*"

func rueidisLocker(t *testing.T, e *env, opt rueidislock.LockerOption) rueidislock.Locker {
	t.Helper()
	opt.KeyPrefix = "lw"
	if opt.TryNextAfter == 0 {
		// rueidislock's 20ms default bounds each key's acquire; on a loaded test machine that
		// can fail a key of an uncontended lock, which these tests do not study.
		opt.TryNextAfter = time.Second
	}
	opt.ClientOption.InitAddress = []string{e.srv.Addr}
	opt.ClientBuilder = rueidisobserve.ClientBuilder(e.obs)
	locker, err := rueidislock.NewLocker(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(locker.Close)
	return locker
}

// lockValue reads the value rueidislock wrote (on any of the lock's keys), for the token audit.
func lockValue(t *testing.T, e *env, name string) string {
	t.Helper()
	for i := range 3 {
		if v, err := e.srv.Do(context.Background(), "get", fmt.Sprintf("lw:%d:%s", i, name)); err == nil {
			if s, ok := v.(string); ok && s != "" {
				return s
			}
		}
	}
	t.Fatalf("no key of lock %s holds a value", name)
	return ""
}

func TestRueidislockCycles(t *testing.T) {
	e := newEnv(t, rueidisPattern)
	var tokens []string
	cycles := func(locker rueidislock.Locker) {
		for range 3 {
			renewed := e.value(t, "lock_renewals_total", "ok")
			ctx, cancel, err := locker.WithContext(context.Background(), "jobs:cycle")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, lockValue(t, e, "jobs:cycle"))
			e.eventually(t, "an extend", func() bool { return e.value(t, "lock_renewals_total", "ok") > renewed })
			cancel()
			<-ctx.Done()
		}
	}
	cycles(rueidisLocker(t, e, rueidislock.LockerOption{ExtendInterval: 50 * time.Millisecond}))
	// One lock of three keys per cycle: one acquire, one hold and one release per cycle (a
	// lock taken by a majority of its keys is released once, by the majority's answer).
	wants := []want{
		{"lock_acquire_wait_seconds", "acquired", 3},
		{"lock_releases_total", "ok", 3},
		{"lock_held_seconds", "", 3},
		{"lock_held", "", 0},
		{"lock_renewals_total", "not_owned", 0},
		{"lock_renewals_total", "failed", 0},
	}
	e.check(t, wants...)
	e.assertNoToken(t, tokens)
	// Scripts cached on the server: a fresh observer sees EVALSHA of the known SHAs only.
	e.observe(t, rueidisPattern)
	cycles(rueidisLocker(t, e, rueidislock.LockerOption{ExtendInterval: 50 * time.Millisecond}))
	e.check(t, wants...)
}

func TestRueidislockContention(t *testing.T) {
	e := newEnv(t, rueidisPattern)
	locker := rueidisLocker(t, e, rueidislock.LockerOption{})
	_, cancelA, err := locker.WithContext(context.Background(), "jobs:1")
	if err != nil {
		t.Fatal(err)
	}
	tokenA := lockValue(t, e, "jobs:1")
	// C tries once: busy.
	if _, _, err := locker.TryWithContext(context.Background(), "jobs:1"); !errors.Is(err, rueidislock.ErrNotLocked) {
		t.Fatalf("C's try: %v", err)
	}
	e.eventually(t, "C's wait to be given up", func() bool { return e.value(t, "lock_acquire_wait_seconds", "busy") >= 1 })
	// B waits until A lets go.
	type result struct {
		ctx    context.Context
		cancel context.CancelFunc
		err    error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel, err := locker.WithContext(context.Background(), "jobs:1")
		done <- result{ctx, cancel, err}
	}()
	e.eventually(t, "B's wait to be tracked", func() bool { return e.obs.Tracked() >= 2 })
	cancelA()
	b := <-done
	if b.err != nil {
		t.Fatal(b.err)
	}
	tokenB := lockValue(t, e, "jobs:1")
	b.cancel()
	e.check(t, want{"lock_acquire_wait_seconds", "acquired", 2}, want{"lock_held", "", 0})
	// B waited for an invalidation, drawing a new value for each try: no value retried, so
	// the wire showed no waiter and the series is absent rather than a guessed number.
	if v, present := e.waiters(t); present {
		t.Errorf("lock_waiters = %v for rueidislock, want no series", v)
	}
	e.assertNoToken(t, []string{tokenA, tokenB})
}

// The keys expire under a holder whose extends are too rare: its next extend is not owned.
// Client-side caching is off so that the extend is the timer's (with caching, rueidislock
// reacts to the expiry's invalidation with an extend under the passed deadline, which rueidis
// never sends).
func TestRueidislockRefreshAfterExpiry(t *testing.T) {
	e := newEnv(t, rueidisPattern)
	locker := rueidisLocker(t, e, rueidislock.LockerOption{
		KeyValidity: time.Second, ExtendInterval: 2 * time.Second,
		ClientOption: rueidis.ClientOption{DisableCache: true},
	})
	ctx, cancel, err := locker.WithContext(context.Background(), "jobs:1")
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	token := lockValue(t, e, "jobs:1")
	<-ctx.Done() // rueidislock cancels the lock's context once a majority of its keys is lost
	// The first extends find the keys expired; the ones still in flight when rueidislock
	// cancels the lock are called off, not counted.
	e.eventually(t, "an extend to be refused", func() bool {
		return e.value(t, "lock_renewals_total", "not_owned") >= 1
	})
	e.eventually(t, "the lock to count as let go", func() bool { return e.value(t, "lock_held", "") == 0 })
	e.check(t, want{"lock_renewals_total", "ok", 0}, want{"lock_renewals_total", "failed", 0}, want{"lock_held_seconds", "", 1})
	e.assertNoToken(t, []string{token})
}

// A stale holder releases after another owner took the keys (rueidislock's Force): every
// key's delete is not owned. (After a plain expiry rueidislock sends no delete at all: it
// sends it under the lock's passed deadline, and rueidis fails it unsent.)
func TestRueidislockStaleRelease(t *testing.T) {
	e := newEnv(t, rueidisPattern)
	opt := rueidislock.LockerOption{KeyValidity: 30 * time.Second, ExtendInterval: time.Minute,
		ClientOption: rueidis.ClientOption{DisableCache: true}}
	holderA, holderB := rueidisLocker(t, e, opt), rueidisLocker(t, e, opt)
	_, cancelA, err := holderA.WithContext(context.Background(), "jobs:1")
	if err != nil {
		t.Fatal(err)
	}
	tokenA := lockValue(t, e, "jobs:1")
	_, cancelB, err := holderB.ForceWithContext(context.Background(), "jobs:1")
	if err != nil {
		t.Fatal(err)
	}
	tokenB := lockValue(t, e, "jobs:1")
	if tokenB == tokenA {
		t.Fatal("B's force left A's value on the first key")
	}
	// rueidislock writes the keys past the majority in the background: wait until B owns all
	// three, so that every one of A's deletes is stale.
	e.eventually(t, "B's force to reach every key", func() bool {
		for i := range 3 {
			v, err := e.srv.Do(context.Background(), "get", fmt.Sprintf("lw:%d:jobs:1", i))
			if err != nil || v != tokenB {
				return false
			}
		}
		return true
	})
	cancelA()
	// One stale release of one lock: every key (so a majority) answers not owned.
	if got := e.value(t, "lock_releases_total", "not_owned"); got != 1 {
		t.Fatalf("stale releases not owned = %v, want 1", got)
	}
	e.check(t, want{"lock_releases_total", "ok", 0}, want{"lock_held", "", 1})
	cancelB()
	e.check(t, want{"lock_releases_total", "ok", 1}, want{"lock_held", "", 0}, want{"lock_held_seconds", "", 2})
	e.assertNoToken(t, []string{tokenA, tokenB})
}

// Redis paused past the extend's deadline: the extends fail, and the lock ends.
func TestRueidislockServerPaused(t *testing.T) {
	e := newEnv(t, rueidisPattern)
	locker := rueidisLocker(t, e, rueidislock.LockerOption{
		// The validity is ten write timeouts: rueidis times out the extends sent to the paused
		// server (an error, counted failed) well before the lock's own deadline calls them off
		// (rueidislock cancels them: the holder's decision, counted nothing), even on a
		// starved machine whose timers fire late.
		KeyValidity: 3 * time.Second, ExtendInterval: 100 * time.Millisecond,
		ClientOption: rueidis.ClientOption{ConnWriteTimeout: 300 * time.Millisecond, DisableRetry: true},
	})
	renewed := e.value(t, "lock_renewals_total", "ok")
	ctx, cancel, err := locker.WithContext(context.Background(), "jobs:1")
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	token := lockValue(t, e, "jobs:1")
	e.eventually(t, "an extend", func() bool { return e.value(t, "lock_renewals_total", "ok") > renewed })
	e.srv.Pause()
	<-ctx.Done()
	// The server stays paused until the client has timed out its extends: resumed earlier (the
	// lock's context can end before rueidis's timeout fires on a starved machine), the server
	// would answer the queued extends, and they would be honest ok renewals. Renewals of the
	// three keys count once per round, by quorum.
	e.eventually(t, "the failed extends to be counted", func() bool {
		return e.value(t, "lock_renewals_total", "failed") >= 1
	})
	e.srv.Resume()
	// rueidislock usually builds its deletes under the lock's passed deadline and never sends
	// them (nothing counted); on a starved machine a delete can leave before that deadline and
	// meet the paused server, which is an honest "error" (one per key at most). Never "ok" or
	// "not_owned": the server was never reached.
	e.check(t, want{"lock_releases_total", "ok", 0}, want{"lock_releases_total", "not_owned", 0})
	if got := e.value(t, "lock_releases_total", "error"); got > 3 {
		t.Errorf("release errors = %v, want at most one per key (3)", got)
	}
	e.assertNoToken(t, []string{token})
}
