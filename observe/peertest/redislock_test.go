package peertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// redislockEnv is a go-redis client with the observer's hook, and redislock on it.
func redislockEnv(t *testing.T, e *env, opts *redis.Options) *redislock.Client {
	t.Helper()
	if opts == nil {
		opts = &redis.Options{}
	}
	opts.Addr = e.srv.Addr
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(e.obs.Hook())
	return redislock.New(rdb)
}

func TestRedislockCycles(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "jobs:*")
	var tokens []string
	cycles := func(locker *redislock.Client) {
		for range 5 {
			l, err := locker.Obtain(ctx, "jobs:cycle", 10*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, l.Token())
			if err := l.Refresh(ctx, 10*time.Second, nil); err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	cycles(redislockEnv(t, e, nil))
	wants := []want{
		{"lock_acquire_wait_seconds", "acquired", 5},
		{"lock_renewals_total", "ok", 5},
		{"lock_releases_total", "ok", 5},
		{"lock_held_seconds", "", 5},
		{"lock_held", "", 0},
		{"lock_acquire_wait_seconds", "busy", 0},
	}
	e.check(t, wants...)
	e.assertNoToken(t, tokens)

	// A fresh observer on a server that has the scripts cached sees only EVALSHA: the
	// library's known SHAs must be recognised.
	e.observe(t, "jobs:*")
	cycles(redislockEnv(t, e, nil))
	e.check(t, wants...)
}

func TestRedislockContention(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "jobs:*")
	locker := redislockEnv(t, e, nil)
	a, err := locker.Obtain(ctx, "jobs:1", 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// C tries once (redislock's default NoRetry): busy, once the give-up window passes.
	if _, err := locker.Obtain(ctx, "jobs:1", 30*time.Second, nil); !errors.Is(err, redislock.ErrNotObtained) {
		t.Fatalf("second obtain: %v", err)
	}
	// B retries every 20ms until A releases.
	type result struct {
		l   *redislock.Lock
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := locker.Obtain(ctx, "jobs:1", 30*time.Second, &redislock.Options{
			RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(20*time.Millisecond), 1000)})
		done <- result{l, err}
	}()
	// A holds, B waits (and C's wait, until it is given up): two or three entries.
	e.eventually(t, "B's wait to be tracked", func() bool { return e.obs.Tracked() >= 2 })
	const held = 200 * time.Millisecond
	time.Sleep(held)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b := <-done
	if b.err != nil {
		t.Fatal(b.err)
	}
	defer b.l.Release(ctx)
	e.eventually(t, "C's wait to be given up", func() bool { return e.value(t, "lock_acquire_wait_seconds", "busy") == 1 })
	e.check(t, want{"lock_acquire_wait_seconds", "acquired", 2}, want{"lock_held", "", 1})
	// B's wait began before it was seen tracked and ended after A's release, which came
	// `held` later; A's own acquire adds a round trip.
	if sum := e.histogramSum(t, "lock_acquire_wait_seconds", "acquired"); sum < held.Seconds() {
		t.Fatalf("acquired waits sum to %vs, want at least B's %v", sum, held)
	}
	e.assertNoToken(t, []string{a.Token(), b.l.Token()})
}

func TestRedislockExpiredHolder(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "jobs:*")
	locker := redislockEnv(t, e, nil)
	a, err := locker.Obtain(ctx, "jobs:1", 100*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The key expires; B takes the lock; A, late, refreshes and releases.
	var b *redislock.Lock
	e.eventually(t, "A's key to expire and B to obtain", func() bool {
		b, err = locker.Obtain(ctx, "jobs:1", 30*time.Second, nil)
		return err == nil
	})
	refreshErr := a.Refresh(ctx, time.Second, nil)
	releaseErr := a.Release(ctx)
	if !errors.Is(refreshErr, redislock.ErrNotObtained) || !errors.Is(releaseErr, redislock.ErrLockNotHeld) {
		t.Fatalf("late refresh %v, late release %v", refreshErr, releaseErr)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	e.check(t,
		want{"lock_renewals_total", "not_owned", 1},
		want{"lock_releases_total", "not_owned", 1},
		want{"lock_releases_total", "ok", 1},
		want{"lock_held", "", 0},
		want{"lock_held_seconds", "", 2},
	)
	e.assertNoToken(t, []string{a.Token(), b.Token()}, refreshErr, releaseErr)
}

func TestRedislockServerPaused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "jobs:*")
	locker := redislockEnv(t, e, &redis.Options{ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	warm, err := locker.Obtain(ctx, "jobs:warm", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Cache the scripts on the server, so the paused calls are the operations themselves.
	if err := warm.Refresh(ctx, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := locker.Obtain(ctx, "jobs:1", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Pause()
	refreshErr := a.Refresh(ctx, time.Minute, nil)
	releaseErr := a.Release(ctx)
	e.srv.Resume()
	if refreshErr == nil || releaseErr == nil {
		t.Fatalf("paused server answered: refresh %v, release %v", refreshErr, releaseErr)
	}
	e.check(t,
		want{"lock_renewals_total", "failed", 1},
		want{"lock_releases_total", "error", 1},
		// The release never reached the server: the lock stays counted until its TTL.
		want{"lock_held", "", 1},
	)
	e.assertNoToken(t, []string{a.Token(), warm.Token()}, refreshErr, releaseErr)
}
