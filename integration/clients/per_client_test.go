package clients_test

import (
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/integration/clients"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestRedisPyWithoutTimeout(t *testing.T) {
	srv := redistest.Start(t)
	r := clients.NewRunner(t, srv.Addr)
	a := r.Holder(clients.Start(t, clients.RedisPy, srv.Addr), "A")
	const name = "no-ttl"

	// timeout=None, redis-py's default: the key never expires.
	wantResult(t, "A acquires", a.Acquire(name, 0), clients.Acquired)
	if pttl := r.Redis().PTTL(t.Context(), name).Val(); pttl != -1 {
		t.Errorf("PTTL = %v, want -1 (no expiry)", pttl)
	}
	if got := a.Extend(name, time.Second); got.Result != clients.Failed || got.ErrorType != "LockError" {
		t.Errorf("extend: %v, want failed with LockError (redis-py cannot extend a lock without timeout)", got)
	}
	wantResult(t, "A releases", a.Release(name), clients.Released)
	wantCounts(t, r, name, clients.Counts{Acquired: 1, Released: 1})
}

func TestRedisPyReacquire(t *testing.T) {
	srv := redistest.Start(t)
	r := clients.NewRunner(t, srv.Addr)
	a := r.Holder(clients.Start(t, clients.RedisPy, srv.Addr), "A")
	const name, lease = "reacquire", 10 * time.Second

	wantResult(t, "A acquires", a.Acquire(name, lease), clients.Acquired)
	before := expiresAt(t, r, name)
	waitPTTLBelow(t, r, name, lease-200*time.Millisecond)
	wantResult(t, "A reacquires", a.Do(clients.OpReacquire, name, 0), clients.Extended)
	if after := expiresAt(t, r, name); !after.After(before) {
		t.Errorf("expiry after reacquire %v, before %v: want it later", after, before)
	}
	wantResult(t, "A releases", a.Release(name), clients.Released)
	wantCounts(t, r, name, clients.Counts{Acquired: 1, Renewed: 1, Released: 1})
}

func TestRedissonReentryAndUnlock(t *testing.T) {
	srv := redistest.Start(t)
	r := clients.NewRunner(t, srv.Addr)
	d := clients.Start(t, clients.Redisson, srv.Addr)
	a, b := r.Holder(d, "A"), r.Holder(d, "B") // two threads of one client
	const name, lease = "reentrant", 10 * time.Second
	unlocks := r.Redis().Subscribe(t.Context(), clients.RedissonChannel(name))
	defer unlocks.Close()
	if _, err := unlocks.Receive(t.Context()); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}

	wantResult(t, "A acquires", a.Acquire(name, lease), clients.Acquired)
	wantResult(t, "A re-enters", a.Acquire(name, lease), clients.Reentered)
	wantResult(t, "B, another thread, acquires", b.Acquire(name, lease), clients.Busy)
	checkHolder(t, r.Redis(), keyShape{key: name, typ: "hash", holder: thread, count: "2"})
	wantResult(t, "A unlocks once", a.Release(name), clients.Decremented)
	checkHolder(t, r.Redis(), keyShape{key: name, typ: "hash", holder: thread, count: "1"})
	wantResult(t, "A unlocks again", a.Release(name), clients.Released)
	if n := r.Redis().Exists(t.Context(), name).Val(); n != 0 {
		t.Errorf("the key is still there after the last unlock")
	}
	msg, err := unlocks.ReceiveMessage(t.Context())
	if err != nil || msg.Payload != "0" {
		t.Errorf("unlock message on %s = %v, %v; want payload 0", clients.RedissonChannel(name), msg, err)
	}
	wantResult(t, "B acquires", b.Acquire(name, lease), clients.Acquired)
	wantResult(t, "B releases", b.Release(name), clients.Released)
	wantCounts(t, r, name, clients.Counts{Acquired: 2, Renewed: 2, Released: 2})
}
