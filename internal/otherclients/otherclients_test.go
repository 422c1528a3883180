package otherclients

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// uuid1Shape is redis-py's token: uuid1().hex, 32 hex digits whose 13th is the version, 1.
var uuid1Shape = regexp.MustCompile(`^[0-9a-f]{12}1[0-9a-f]{3}[89ab][0-9a-f]{15}$`)

// waitGone polls until Redis has dropped key: reading an expired key drops it at once, so
// the lapse is observed rather than slept for.
func waitGone(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Exists(t.Context(), key).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists after 10s", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRedisPyLockOnTheWire(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	a, err := NewRedisPyLock(rdb, "jobs:nightly", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewRedisPyLock(rdb, "jobs:nightly", 10*time.Second)
	if ok, err := a.Acquire(ctx); !ok || err != nil {
		t.Fatalf("first acquire = %v, %v", ok, err)
	}
	if typ := rdb.Type(ctx, "jobs:nightly").Val(); typ != "string" {
		t.Errorf("type %s, want string", typ)
	}
	// The token is read here to check its shape only; it is never printed.
	if !uuid1Shape.MatchString(rdb.Get(ctx, "jobs:nightly").Val()) {
		t.Error("the lock's value is not shaped like uuid1().hex")
	}
	if ok, err := b.Acquire(ctx); ok || err != nil {
		t.Fatalf("second holder's acquire = %v, %v; want busy", ok, err)
	}
	if err := a.Extend(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if pttl := rdb.PTTL(ctx, "jobs:nightly").Val(); pttl <= 10*time.Second {
		t.Errorf("PTTL after extend(10s) = %v, want the remaining time plus 10s", pttl)
	}
	if err := a.Reacquire(ctx); err != nil {
		t.Fatal(err)
	}
	if pttl := rdb.PTTL(ctx, "jobs:nightly").Val(); pttl > 10*time.Second {
		t.Errorf("PTTL after reacquire = %v, want the timeout at most", pttl)
	}
	if err := b.Release(ctx); !errors.Is(err, ErrNotOwned) {
		t.Errorf("the other holder's release = %v, want ErrNotOwned", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "jobs:nightly").Val(); n != 0 {
		t.Error("the key outlived its release")
	}
}

// TestRedisPyStaleStepsAfterLapse: A's lock lapses, B takes the key over, and A's release and
// extend answer not owned, leaving B's lock in place (redis-py's LockNotOwnedError).
func TestRedisPyStaleStepsAfterLapse(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	a, _ := NewRedisPyLock(rdb, "jobs:lapse", 50*time.Millisecond)
	b, _ := NewRedisPyLock(rdb, "jobs:lapse", 10*time.Second)
	if ok, err := a.Acquire(ctx); !ok || err != nil {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	waitGone(t, rdb, "jobs:lapse")
	if ok, err := b.Acquire(ctx); !ok || err != nil {
		t.Fatalf("takeover = %v, %v", ok, err)
	}
	for name, step := range map[string]func(context.Context) error{
		"release":   a.Release,
		"extend":    func(ctx context.Context) error { return a.Extend(ctx, time.Second) },
		"reacquire": a.Reacquire,
	} {
		if err := step(ctx); !errors.Is(err, ErrNotOwned) {
			t.Errorf("stale %s = %v, want ErrNotOwned", name, err)
		}
	}
	if err := b.Release(ctx); err != nil {
		t.Errorf("the new holder's release after the stale steps: %v", err)
	}
}

func TestRedissonLockOnTheWire(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := t.Context()
	client := RedissonClientID()
	a, err := NewRedissonLock(rdb, "orders:42", client, 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewRedissonLock(rdb, "orders:42", client, 2, 10*time.Second)
	unlocks := rdb.Subscribe(ctx, RedissonChannel("orders:42"))
	defer unlocks.Close()
	if _, err := unlocks.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}

	steps := []struct {
		name      string
		do        func(context.Context) (bool, int64, error)
		held      bool
		count     int64
		wantCount string // the holder field's value after the step; "" for no key
	}{
		{"lock", a.Lock, true, 1, "1"},
		{"re-entry", a.Lock, true, 2, "2"},
		{"another thread", other.Lock, false, 0, "2"},
	}
	for _, s := range steps {
		held, count, err := s.do(ctx)
		if err != nil || held != s.held || count != s.count {
			t.Fatalf("%s = %v, %d, %v; want %v, %d", s.name, held, count, err, s.held, s.count)
		}
		fields := rdb.HGetAll(ctx, "orders:42").Val()
		if len(fields) != 1 || fields[client+":1"] != s.wantCount {
			t.Fatalf("after %s the hash holds %d field(s), the holder's count %q; want one field, %q", s.name, len(fields), fields[client+":1"], s.wantCount)
		}
	}
	if err := a.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{1, 0} {
		if left, err := a.Unlock(ctx); err != nil || left != want {
			t.Fatalf("unlock = %d, %v; want %d left", left, err, want)
		}
	}
	if n := rdb.Exists(ctx, "orders:42").Val(); n != 0 {
		t.Error("the key outlived the last unlock")
	}
	msg, err := unlocks.ReceiveMessage(ctx)
	if err != nil || msg.Payload != RedissonUnlockMessage {
		t.Errorf("unlock message = %v, %v; want %q", msg, err, RedissonUnlockMessage)
	}
	if _, err := a.Unlock(ctx); !errors.Is(err, ErrNotOwned) {
		t.Errorf("unlock of a free lock = %v, want ErrNotOwned", err)
	}
}

// TestRedissonStaleStepsAfterLapse: a lease without the watchdog lapses, another client takes
// the name, and the first one's renewal and unlock answer not owned without touching the new
// holder's field.
func TestRedissonStaleStepsAfterLapse(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := t.Context()
	a, _ := NewRedissonLock(rdb, "orders:7", RedissonClientID(), 1, 50*time.Millisecond)
	b, _ := NewRedissonLock(rdb, "orders:7", RedissonClientID(), 1, 10*time.Second)
	if held, _, err := a.Lock(ctx); !held || err != nil {
		t.Fatalf("lock = %v, %v", held, err)
	}
	waitGone(t, rdb, "orders:7")
	if held, _, err := b.Lock(ctx); !held || err != nil {
		t.Fatalf("takeover = %v, %v", held, err)
	}
	if err := a.Renew(ctx); !errors.Is(err, ErrNotOwned) {
		t.Errorf("stale renewal = %v, want ErrNotOwned", err)
	}
	if _, err := a.Unlock(ctx); !errors.Is(err, ErrNotOwned) {
		t.Errorf("stale unlock = %v, want ErrNotOwned", err)
	}
	if left, err := b.Unlock(ctx); err != nil || left != 0 {
		t.Errorf("the new holder's unlock after the stale steps = %d, %v", left, err)
	}
}

func TestBadDurationsAreRefused(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	if _, err := NewRedisPyLock(rdb, "k", 0); err == nil {
		t.Error("a redis-py lock without timeout was accepted")
	}
	if _, err := NewRedissonLock(rdb, "k", "c", 1, time.Microsecond); err == nil {
		t.Error("a Redisson lease under a millisecond was accepted")
	}
}
