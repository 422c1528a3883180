package peertest

import (
	"cmp"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/redis/go-redis/v9"
)

// The lock libraries on go-redis, bsm/redislock and go-redsync/redsync, go through the same
// stories below, each behind a small adapter: what the observer must report is the same.

// goRedisPeer is one of the libraries.
type goRedisPeer struct {
	name string
	// locker is the library on a go-redis client of e's server (with opts, if not nil) that
	// has e's observer hooked.
	locker func(t *testing.T, e *env, opts *redis.Options) peerLocker
	// shortTTL is a lease that expires within a test, but not before the library itself
	// accepts it: redsync judges a lock invalid when its try took longer than the expiry (less
	// a drift), which a starved machine made 100ms do, and releases it.
	shortTTL time.Duration
	// notOwned is whether an error of refresh or release is the library's answer that the lock
	// is someone else's (rather than a failure to ask).
	notOwned func(error) bool
}

func goRedisPeers() []goRedisPeer {
	return []goRedisPeer{
		{"redislock", redislockLocker, 100 * time.Millisecond, func(err error) bool {
			return errors.Is(err, redislock.ErrNotObtained) || errors.Is(err, redislock.ErrLockNotHeld)
		}},
		// redsync reports a refusal as not ok, with whatever error its pools gave: the adapter's
		// error is that answer.
		{"redsync", redsyncLocker, 2 * time.Second, func(err error) bool { return err != nil }},
	}
}

// errBusy wraps a library's own "the lock is taken" error.
var errBusy = errors.New("lock taken")

type peerLocker interface {
	// tryObtain tries once to take key for ttl.
	tryObtain(ctx context.Context, key string, ttl time.Duration) (peerLock, error)
	// obtainWaiting retries (with the library's own backoff) until it holds key.
	obtainWaiting(ctx context.Context, key string, ttl time.Duration) (peerLock, error)
}

type peerLock interface {
	token() string
	// refresh extends the lease by the TTL it was taken with; an error when it was not extended.
	refresh(ctx context.Context) error
	// release deletes the lock; an error when it was not released.
	release(ctx context.Context) error
}

// peerClient is a go-redis client of e's server with e's observer hooked.
func peerClient(t *testing.T, e *env, opts *redis.Options) *redis.Client {
	t.Helper()
	if opts == nil {
		opts = &redis.Options{}
	}
	opts.Addr = e.srv.Addr
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(e.obs.Hook())
	return rdb
}

type redislockAdapter struct{ c *redislock.Client }

func redislockLocker(t *testing.T, e *env, opts *redis.Options) peerLocker {
	return redislockAdapter{redislockEnv(t, e, opts)}
}

// redislockEnv is redislock on a go-redis client that has the observer's hook.
func redislockEnv(t *testing.T, e *env, opts *redis.Options) *redislock.Client {
	t.Helper()
	return redislock.New(peerClient(t, e, opts))
}

// tryObtain is redislock's default, NoRetry.
func (a redislockAdapter) tryObtain(ctx context.Context, key string, ttl time.Duration) (peerLock, error) {
	return a.obtain(ctx, key, ttl, nil)
}

func (a redislockAdapter) obtainWaiting(ctx context.Context, key string, ttl time.Duration) (peerLock, error) {
	return a.obtain(ctx, key, ttl, &redislock.Options{
		RetryStrategy: redislock.LimitRetry(redislock.LinearBackoff(20*time.Millisecond), 1000)})
}

func (a redislockAdapter) obtain(ctx context.Context, key string, ttl time.Duration, opts *redislock.Options) (peerLock, error) {
	l, err := a.c.Obtain(ctx, key, ttl, opts)
	if errors.Is(err, redislock.ErrNotObtained) {
		return nil, errors.Join(errBusy, err)
	}
	if err != nil {
		return nil, err
	}
	return redislockLease{l, ttl}, nil
}

type redislockLease struct {
	l   *redislock.Lock
	ttl time.Duration
}

func (l redislockLease) token() string                     { return l.l.Token() }
func (l redislockLease) refresh(ctx context.Context) error { return l.l.Refresh(ctx, l.ttl, nil) }
func (l redislockLease) release(ctx context.Context) error { return l.l.Release(ctx) }

type redsyncAdapter struct{ rs *redsync.Redsync }

// redsyncLocker is redsync on one go-redis pool.
func redsyncLocker(t *testing.T, e *env, opts *redis.Options) peerLocker {
	return redsyncAdapter{redsyncEnv(t, e, opts)}
}

func (a redsyncAdapter) tryObtain(ctx context.Context, key string, ttl time.Duration) (peerLock, error) {
	m := a.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1))
	err := m.LockContext(ctx)
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) {
		return nil, errors.Join(errBusy, err)
	}
	if err != nil {
		return nil, err
	}
	return redsyncLease{m}, nil
}

// obtainWaiting retries with redsync's default delays (50-250ms).
func (a redsyncAdapter) obtainWaiting(ctx context.Context, key string, ttl time.Duration) (peerLock, error) {
	m := a.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1000))
	if err := m.LockContext(ctx); err != nil {
		return nil, err
	}
	return redsyncLease{m}, nil
}

type redsyncLease struct{ m *redsync.Mutex }

// errRefused stands for an error redsync did not give with a refusal.
var errRefused = errors.New("refused")

func (l redsyncLease) token() string { return l.m.Value() }

func (l redsyncLease) refresh(ctx context.Context) error {
	if ok, err := l.m.ExtendContext(ctx); !ok {
		return cmp.Or(err, errRefused)
	}
	return nil
}

func (l redsyncLease) release(ctx context.Context) error {
	if ok, err := l.m.UnlockContext(ctx); !ok {
		return cmp.Or(err, errRefused)
	}
	return nil
}

// eachGoRedisPeer runs story as a subtest per library, each on a server and an observer of
// jobs:* of its own.
func eachGoRedisPeer(t *testing.T, story func(t *testing.T, p goRedisPeer, e *env)) {
	for _, p := range goRedisPeers() {
		t.Run(p.name, func(t *testing.T) { story(t, p, newEnv(t, "jobs:*")) })
	}
}

// mustObtain takes key for ttl in one try.
func mustObtain(t *testing.T, locker peerLocker, key string, ttl time.Duration) peerLock {
	t.Helper()
	l, err := locker.tryObtain(context.Background(), key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Acquire, refresh and release five times; then again under a fresh observer on a server that
// has the scripts cached, which sees only EVALSHA: the library's known SHAs must be recognised.
func TestGoRedisLockersCycles(t *testing.T) {
	eachGoRedisPeer(t, func(t *testing.T, p goRedisPeer, e *env) {
		ctx := context.Background()
		var tokens []string
		cycles := func(locker peerLocker) {
			for range 5 {
				l, err := locker.tryObtain(ctx, "jobs:cycle", 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				tokens = append(tokens, l.token())
				if err := l.refresh(ctx); err != nil {
					t.Fatal(err)
				}
				if err := l.release(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		cycles(p.locker(t, e, nil))
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

		e.observe(t, "jobs:*")
		cycles(p.locker(t, e, nil))
		e.check(t, wants...)
	})
}

// A holds; C tries once and is busy once the give-up window passes; B waits until A releases.
func TestGoRedisLockersContention(t *testing.T) {
	eachGoRedisPeer(t, func(t *testing.T, p goRedisPeer, e *env) {
		ctx := context.Background()
		locker := p.locker(t, e, nil)
		a := mustObtain(t, locker, "jobs:1", 30*time.Second)
		if _, err := locker.tryObtain(ctx, "jobs:1", 30*time.Second); !errors.Is(err, errBusy) {
			t.Fatalf("C's single try: %v", err)
		}
		type result struct {
			l   peerLock
			err error
		}
		done := make(chan result, 1)
		go func() {
			l, err := locker.obtainWaiting(ctx, "jobs:1", 30*time.Second)
			done <- result{l, err}
		}()
		// A holds, B waits (and C's wait, until it is given up): two or three entries. B
		// retries with its value, so it is a waiter; C tried once, so it is none.
		e.eventually(t, "B's wait to be tracked", func() bool { return e.obs.Tracked() >= 2 })
		e.eventually(t, "B counted as a waiter", func() bool { v, _ := e.waiters(t); return v == 1 })
		const held = 200 * time.Millisecond
		time.Sleep(held)
		if err := a.release(ctx); err != nil {
			t.Fatal(err)
		}
		b := <-done
		if b.err != nil {
			t.Fatal(b.err)
		}
		defer b.l.release(ctx)
		e.eventually(t, "C's wait to be given up", func() bool { return e.value(t, "lock_acquire_wait_seconds", "busy") == 1 })
		e.check(t, want{"lock_acquire_wait_seconds", "acquired", 2}, want{"lock_held", "", 1},
			want{"lock_waiters", "", 0})
		// B's wait began before it was seen tracked and ended after A's release, which came
		// `held` later; A's own acquire adds a round trip.
		if sum := e.histogramSum(t, "lock_acquire_wait_seconds", "acquired"); sum < held.Seconds() {
			t.Fatalf("acquired waits sum to %vs, want at least B's %v", sum, held)
		}
		e.assertNoToken(t, []string{a.token(), b.l.token()})
	})
}

// A's key expires; B takes the lock; A, late, refreshes and releases: both not owned.
func TestGoRedisLockersExpiredHolder(t *testing.T) {
	eachGoRedisPeer(t, func(t *testing.T, p goRedisPeer, e *env) {
		ctx := context.Background()
		locker := p.locker(t, e, nil)
		a := mustObtain(t, locker, "jobs:1", p.shortTTL)
		var b peerLock
		e.eventually(t, "A's key to expire and B to obtain", func() bool {
			var err error
			b, err = locker.tryObtain(ctx, "jobs:1", 30*time.Second)
			return err == nil
		})
		refreshErr := a.refresh(ctx)
		releaseErr := a.release(ctx)
		if !p.notOwned(refreshErr) || !p.notOwned(releaseErr) {
			t.Fatalf("late refresh %v, late release %v: want both refused as not owned", refreshErr, releaseErr)
		}
		if err := b.release(ctx); err != nil {
			t.Fatal(err)
		}
		e.check(t,
			want{"lock_renewals_total", "not_owned", 1},
			want{"lock_releases_total", "not_owned", 1},
			want{"lock_releases_total", "ok", 1},
			want{"lock_held", "", 0},
			want{"lock_held_seconds", "", 2},
		)
		e.assertNoToken(t, []string{a.token(), b.token()}, refreshErr, releaseErr)
	})
}

// A server paused past the client's read timeout: the refresh fails and the release errors.
func TestGoRedisLockersServerPaused(t *testing.T) {
	eachGoRedisPeer(t, func(t *testing.T, p goRedisPeer, e *env) {
		ctx := context.Background()
		locker := p.locker(t, e, &redis.Options{ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
		warm := mustObtain(t, locker, "jobs:warm", time.Minute)
		// Cache the scripts on the server, so the paused calls are the operations themselves.
		if err := warm.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := warm.release(ctx); err != nil {
			t.Fatal(err)
		}
		a := mustObtain(t, locker, "jobs:1", time.Minute)
		e.srv.Pause()
		refreshErr := a.refresh(ctx)
		releaseErr := a.release(ctx)
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
		e.assertNoToken(t, []string{a.token(), warm.token()}, refreshErr, releaseErr)
	})
}
