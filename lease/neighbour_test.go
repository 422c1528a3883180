package lease

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// Another client of the same Redis made the lock's fence key something other than a string (a
// hash of its own that happens to have the name). The fenced acquire fails with Redis's
// WRONGTYPE, and it must fail whole: no lock key left behind holding a token that nobody holds
// (it would keep every contender out for a TTL), no holder key.
func TestAcquireWithAForeignFenceKeyTakesNothing(t *testing.T) {
	srv := redistest.Start(t)
	neighbour := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    Policy
	}{
		{"fenced", Policy{TTL: 10 * time.Second, Fencing: true}},
		{"fenced with holder", Policy{TTL: 10 * time.Second, Fencing: true, RecordHolder: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, srv.Addr)
			n := e.namespace(t, "neighbour", tc.p)
			key := uniqueKey(t)
			if err := neighbour.HSet(ctx, lockkeys.Fence(key), "owner", "someone else").Err(); err != nil {
				t.Fatal(err)
			}
			_, err := n.TryAcquire(ctx, key)
			if err == nil || errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Fatalf("TryAcquire = %v, want Redis's WRONGTYPE error", err)
			}
			for _, k := range []string{key, lockkeys.Holder(key)} {
				if n, err := neighbour.Exists(ctx, k).Result(); err != nil || n != 0 {
					t.Errorf("%q exists (%d, %v) after the failed acquire: a lock nobody holds", k, n, err)
				}
			}
			if typ := neighbour.Type(ctx, lockkeys.Fence(key)).Val(); typ != "hash" {
				t.Errorf("the neighbour's key is a %q now, want its hash untouched", typ)
			}
			e.wantMetrics(t, "neighbour", map[string]float64{
				"lock_acquire_wait_seconds/error":    1,
				"lock_acquire_wait_seconds/acquired": 0,
				"lock_held":                          0,
			})
		})
	}
}

// Another client replaced a held lock's key with a value of another type (a hash, a list, a
// set: a library that keeps its locks in hashes, under the same name). The key no longer holds
// this lease's token, which is what not_owned means: Renew and Release say ErrNotOwned and count
// not_owned (not a failed renew or a release error, which send an operator looking at Redis
// instead), the Abandon renewer abandons at its first renew, and the neighbour's key is left
// alone.
func TestLockKeyReplacedByAnotherTypeIsNotOwned(t *testing.T) {
	srv := redistest.Start(t)
	neighbour := srv.Client(t)
	ctx := context.Background()
	replace := map[string]func(key string) error{
		"hash": func(key string) error { return neighbour.HSet(ctx, key, "owner", "x").Err() },
		"list": func(key string) error { return neighbour.RPush(ctx, key, "x").Err() },
		"set":  func(key string) error { return neighbour.SAdd(ctx, key, "x").Err() },
	}
	for typ, put := range replace {
		for name, p := range map[string]Policy{
			"set nx":              {TTL: 10 * time.Second, OnRenewFailure: Continue},
			"fenced, with holder": {TTL: 10 * time.Second, Fencing: true, RecordHolder: true, OnRenewFailure: Continue},
		} {
			t.Run(typ+"/"+name, func(t *testing.T) {
				e := newEnv(t, srv.Addr)
				n := e.namespace(t, "neighbour", p)
				key := uniqueKey(t)
				l, err := n.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := neighbour.Del(ctx, key).Err(); err != nil {
					t.Fatal(err)
				}
				if err := put(key); err != nil {
					t.Fatal(err)
				}
				if err := l.Renew(ctx); !errors.Is(err, ErrNotOwned) {
					t.Errorf("Renew = %v, want ErrNotOwned", err)
				}
				if err := l.Release(ctx); !errors.Is(err, ErrNotOwned) {
					t.Errorf("Release = %v, want ErrNotOwned", err)
				}
				if got := neighbour.Type(ctx, key).Val(); got != typ {
					t.Errorf("the neighbour's key is a %q after the release, want its %s untouched", got, typ)
				}
				e.wantMetrics(t, "neighbour", map[string]float64{
					"lock_renewals_total/not_owned": 1,
					"lock_renewals_total/failed":    0,
					"lock_releases_total/not_owned": 1,
					"lock_releases_total/error":     0,
				})
			})
		}
	}
	t.Run("abandon at the first renew", func(t *testing.T) {
		e := newEnv(t, srv.Addr)
		n := e.namespace(t, "neighbour", Policy{TTL: 10 * time.Second, RenewInterval: 50 * time.Millisecond, MaxRenewFailures: 3})
		key := uniqueKey(t)
		l, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := neighbour.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		if err := replace["hash"](key); err != nil {
			t.Fatal(err)
		}
		waitCancelled(t, l)
		if cause := context.Cause(l.Context()); !errors.Is(cause, ErrAbandoned) {
			t.Fatalf("cause = %v, want ErrAbandoned", cause)
		}
		if err := l.Release(ctx); !errors.Is(err, ErrAbandoned) {
			t.Errorf("Release = %v, want ErrAbandoned", err)
		}
		e.wantMetrics(t, "neighbour", map[string]float64{
			"lock_renewals_total/not_owned": 1,
			"lock_renewals_total/failed":    0,
			"lock_abandoned_total":          1,
			"lock_releases_total/skipped":   1,
		})
	})
}

// Only WRONGTYPE means "not owned": any other error of the compare (here an ACL that refuses
// GET) is still Redis's error, counted failed and error, never mistaken for an ownership
// answer.
func TestRenewAndReleaseErrorsOtherThanWrongTypeStayErrors(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	if _, err := srv.Do(ctx, "acl", "setuser", "noget", "on", ">pw", "~*", "+@all", "-get"); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "noget", Password: "pw", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	reg := prometheus.NewRegistry()
	c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &env{reg: reg, c: c}
	n := e.namespace(t, "neighbour", Policy{TTL: 10 * time.Second, OnRenewFailure: Continue})
	l, err := n.TryAcquire(ctx, uniqueKey(t)) // SET NX: allowed
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Renew(ctx); err == nil || errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "can't run this command") {
		t.Errorf("Renew = %v, want Redis's ACL error", err)
	}
	if err := l.Release(ctx); err == nil || errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "can't run this command") {
		t.Errorf("Release = %v, want Redis's ACL error", err)
	}
	e.wantMetrics(t, "neighbour", map[string]float64{
		"lock_renewals_total/failed":    1,
		"lock_renewals_total/not_owned": 0,
		"lock_releases_total/error":     1,
		"lock_releases_total/not_owned": 0,
	})
}
