package peertest

import (
	"context"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// redsyncEnv is redsync on one go-redis pool whose client has the observer's hook.
func redsyncEnv(t *testing.T, e *env, opts *redis.Options) *redsync.Redsync {
	t.Helper()
	return redsync.New(goredis.NewPool(peerClient(t, e, opts)))
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
