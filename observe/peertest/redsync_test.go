package peertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// redsyncEnv is redsync on one go-redis pool whose client has the observer's hook.
func redsyncEnv(t *testing.T, e *env, opts *redis.Options) *redsync.Redsync {
	t.Helper()
	if opts == nil {
		opts = &redis.Options{}
	}
	opts.Addr = e.srv.Addr
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(e.obs.Hook())
	return redsync.New(goredis.NewPool(rdb))
}

func TestRedsyncCycles(t *testing.T) {
	e := newEnv(t, "jobs:*")
	var tokens []string
	cycles := func(rs *redsync.Redsync) {
		for range 5 {
			m := rs.NewMutex("jobs:cycle", redsync.WithExpiry(10*time.Second))
			if err := m.Lock(); err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, m.Value())
			if ok, err := m.Extend(); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if ok, err := m.Unlock(); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
	}
	cycles(redsyncEnv(t, e, nil))
	wants := []want{
		{"lock_acquire_wait_seconds", "acquired", 5},
		{"lock_renewals_total", "ok", 5},
		{"lock_releases_total", "ok", 5},
		{"lock_held_seconds", "", 5},
		{"lock_held", "", 0},
	}
	e.check(t, wants...)
	e.assertNoToken(t, tokens)
	// Scripts cached on the server: a fresh observer sees EVALSHA of the known SHAs only.
	e.observe(t, "jobs:*")
	cycles(redsyncEnv(t, e, nil))
	e.check(t, wants...)
}

func TestRedsyncContention(t *testing.T) {
	e := newEnv(t, "jobs:*")
	rs := redsyncEnv(t, e, nil)
	a := rs.NewMutex("jobs:1", redsync.WithExpiry(30*time.Second))
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	// C tries once: busy.
	c := rs.NewMutex("jobs:1", redsync.WithTries(1))
	var taken *redsync.ErrTaken
	if err := c.Lock(); !errors.As(err, &taken) && !errors.Is(err, redsync.ErrFailed) {
		t.Fatalf("C's single try: %v", err)
	}
	// B retries with redsync's default delays (50-250ms) until A unlocks.
	b := rs.NewMutex("jobs:1", redsync.WithExpiry(30*time.Second), redsync.WithTries(1000))
	done := make(chan error, 1)
	go func() { done <- b.LockContext(context.Background()) }()
	e.eventually(t, "B's wait to be tracked", func() bool { return e.obs.Tracked() >= 2 })
	const held = 200 * time.Millisecond
	time.Sleep(held)
	if ok, err := a.Unlock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	defer b.Unlock()
	e.eventually(t, "C's wait to be given up", func() bool { return e.value(t, "lock_acquire_wait_seconds", "busy") == 1 })
	e.check(t, want{"lock_acquire_wait_seconds", "acquired", 2}, want{"lock_held", "", 1})
	if sum := e.histogramSum(t, "lock_acquire_wait_seconds", "acquired"); sum < held.Seconds() {
		t.Fatalf("acquired waits sum to %vs, want at least B's %v", sum, held)
	}
	e.assertNoToken(t, []string{a.Value(), b.Value()})
}

func TestRedsyncExpiredHolder(t *testing.T) {
	e := newEnv(t, "jobs:*")
	rs := redsyncEnv(t, e, nil)
	a := rs.NewMutex("jobs:1", redsync.WithExpiry(2*time.Second)) // long enough for Lock's validity check under load, as in TestRedsyncReleaseAfterExpiry
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	b := rs.NewMutex("jobs:1", redsync.WithExpiry(30*time.Second), redsync.WithTries(1))
	e.eventually(t, "A's key to expire and B to lock", func() bool { return b.Lock() == nil })
	extended, extendErr := a.Extend()
	unlocked, unlockErr := a.Unlock()
	if extended || unlocked {
		t.Fatalf("A's late extend %v (%v) or unlock %v (%v) succeeded", extended, extendErr, unlocked, unlockErr)
	}
	if ok, err := b.Unlock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e.check(t,
		want{"lock_renewals_total", "not_owned", 1},
		want{"lock_releases_total", "not_owned", 1},
		want{"lock_releases_total", "ok", 1},
		want{"lock_held", "", 0},
		want{"lock_held_seconds", "", 2},
	)
	e.assertNoToken(t, []string{a.Value(), b.Value()}, extendErr, unlockErr)
}

// The key expired with no new owner: redsync's delete script answers -1, still not owned.
func TestRedsyncReleaseAfterExpiry(t *testing.T) {
	e := newEnv(t, "jobs:*")
	rs := redsyncEnv(t, e, nil)
	// Long enough that Lock's own validity check (expiry minus the time the try took) holds on
	// a starved machine: with 100ms, a slow try was judged invalid, redsync released it as
	// clean-up and retried, and that release was a second (honest) not_owned.
	a := rs.NewMutex("jobs:1", redsync.WithExpiry(2*time.Second))
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	e.eventually(t, "A's key to expire", func() bool {
		n, err := e.srv.Do(context.Background(), "exists", "jobs:1")
		return err == nil && n == int64(0)
	})
	if ok, err := a.Unlock(); ok {
		t.Fatalf("unlock after expiry succeeded (%v)", err)
	}
	e.check(t, want{"lock_releases_total", "not_owned", 1}, want{"lock_held", "", 0})
}

func TestRedsyncServerPaused(t *testing.T) {
	e := newEnv(t, "jobs:*")
	rs := redsyncEnv(t, e, &redis.Options{ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	warm := rs.NewMutex("jobs:warm", redsync.WithExpiry(time.Minute))
	if err := warm.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Extend(); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Unlock(); err != nil {
		t.Fatal(err)
	}
	a := rs.NewMutex("jobs:1", redsync.WithExpiry(time.Minute))
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	e.srv.Pause()
	extended, extendErr := a.Extend()
	unlocked, unlockErr := a.Unlock()
	e.srv.Resume()
	if extended || unlocked {
		t.Fatal("paused server answered")
	}
	e.check(t,
		want{"lock_renewals_total", "failed", 1},
		want{"lock_releases_total", "error", 1},
		want{"lock_held", "", 1},
	)
	e.assertNoToken(t, []string{a.Value(), warm.Value()}, extendErr, unlockErr)
}
