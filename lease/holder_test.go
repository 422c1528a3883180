package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// newHolderEnv is newEnvMode for a Client that describes itself as holder.
func newHolderEnv(t *testing.T, addr string, single bool, holder string) *env {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	e := &env{rdb: rdb, logs: &testkit.SyncBuffer{}}
	c, err := New(rdb, Options{Holder: holder})
	if err != nil {
		t.Fatal(err)
	}
	if single {
		sendAlone(c)
	}
	t.Cleanup(func() { _ = c.Close() })
	e.c = c
	return e
}

// TestHolderKeyFollowsTheLock: the holder key is written with the lock, renewed with it,
// deleted by the owner's release and left alone by a stale holder's release, with and without
// fencing, in both send modes.
func TestHolderKeyFollowsTheLock(t *testing.T) {
	for _, fencing := range []bool{false, true} {
		t.Run(fmt.Sprintf("fencing=%v", fencing), func(t *testing.T) {
			eachMode(t, func(t *testing.T, single bool) {
				ctx := context.Background()
				const ttl = 10 * time.Second
				ea := newHolderEnv(t, sharedAddr, single, "worker-a pid 1")
				eb := newHolderEnv(t, sharedAddr, single, "worker-b pid 2")
				p := Policy{TTL: ttl, DisableRenewal: true, Fencing: fencing, RecordHolder: true}
				na, nb := ea.namespace(t, "holders", p), eb.namespace(t, "holders", p)
				key := uniqueKey(t)
				hk := lockkeys.Holder(key)

				la, err := na.Acquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				// The record carries when the lock was taken, by the server's clock.
				rec := lockkeys.ParseHolder(ea.rdb.Get(ctx, hk).Val())
				if rec.Description != "worker-a pid 1" {
					t.Fatalf("holder record %+v after acquire, want A's description", rec)
				}
				if age := ea.rdb.Time(ctx).Val().Sub(rec.Acquired); rec.Acquired.IsZero() || age < 0 || age > 5*time.Second {
					t.Fatalf("holder record acquired at %v, %v before the server's TIME; want the acquisition's server time", rec.Acquired, age)
				}
				if pttl := ea.rdb.PTTL(ctx, hk).Val(); pttl <= 0 || pttl > ttl {
					t.Fatalf("holder key PTTL = %v, want within the TTL %v", pttl, ttl)
				}
				// Renew refreshes the holder key's expiry with the lock's.
				ea.rdb.PExpire(ctx, hk, time.Second)
				if err := la.Renew(ctx); err != nil {
					t.Fatal(err)
				}
				if pttl := ea.rdb.PTTL(ctx, hk).Val(); pttl <= time.Second {
					t.Fatalf("holder key PTTL = %v after renew, want the TTL again", pttl)
				}
				if err := la.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if n := ea.rdb.Exists(ctx, key, hk).Val(); n != 0 {
					t.Fatalf("%d of the lock and holder keys left after release", n)
				}

				// A stale holder's release leaves the new owner's lock and holder alone.
				la, err = na.Acquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				ea.rdb.Del(ctx, key, hk) // A's lease lapsed
				lb, err := nb.TryAcquire(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if err := la.Release(ctx); !errors.Is(err, ErrNotOwned) {
					t.Fatalf("stale release = %v, want ErrNotOwned", err)
				}
				if got := lockkeys.ParseHolder(eb.rdb.Get(ctx, hk).Val()).Description; got != "worker-b pid 2" {
					t.Fatalf("holder key = %q after a stale release, want B's description", got)
				}
				if err := lb.Release(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestHolderKeyExpiresWithTheLock: a lease that is never released (HoldUntilExpiry, or a
// holder that died) leaves no holder key once its lock expired.
func TestHolderKeyExpiresWithTheLock(t *testing.T) {
	e := newHolderEnv(t, sharedAddr, false, "short-lived")
	ctx := context.Background()
	n := e.namespace(t, "expiring", Policy{TTL: 200 * time.Millisecond, DisableRenewal: true, ReleaseMode: HoldUntilExpiry, RecordHolder: true})
	key := uniqueKey(t)
	l, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if e.rdb.Exists(ctx, lockkeys.Holder(key)).Val() != 1 {
		t.Fatal("HoldUntilExpiry release deleted the holder key")
	}
	testkit.Eventually(t, 5*time.Second, "the lock and holder keys to expire", func() bool {
		return e.rdb.Exists(ctx, key, lockkeys.Holder(key)).Val() == 0
	})
}

func TestHolderOption(t *testing.T) {
	host, _ := os.Hostname()
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr})
	defer rdb.Close()
	for _, tc := range []struct {
		name, holder, want string
		valid              bool
	}{
		{"default", "", fmt.Sprintf("%s pid %d", host, os.Getpid()), true},
		{"custom", "scheduler-7 (eu-west)", "scheduler-7 (eu-west)", true},
		{"control character", "a\nb", "", false},
		{"too long", strings.Repeat("x", 257), "", false},
		{"invalid UTF-8", "\xff", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(rdb, Options{Holder: tc.holder})
			if !tc.valid {
				if !errors.Is(err, ErrInvalidPolicy) {
					t.Fatalf("New = %v, want ErrInvalidPolicy", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.holder != tc.want {
				t.Errorf("holder = %q, want %q", c.holder, tc.want)
			}
		})
	}
}

// A namespace that records holders refuses lock keys whose holder key could land on another
// cluster slot.
func TestRecordHolderRejectsUntaggableKeys(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "tagless", Policy{RecordHolder: true})
	if _, err := n.TryAcquire(context.Background(), "a}b"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("TryAcquire of a key whose holder key cannot share its slot = %v, want ErrInvalidKey", err)
	}
}

// TestExporterACLReadsHolderNotToken: the exporter's documented least-privilege user can read
// who holds a lock (and its fence) but not the lock's token.
func TestExporterACLReadsHolderNotToken(t *testing.T) {
	srv := redistest.Start(t)
	const password = "holder-acl-test"
	testkit.SetACL(t, srv, testkit.DocumentedACL(t, password))
	e := newHolderEnv(t, srv.Addr, false, "worker-9 pid 99")
	ctx := context.Background()
	n := e.namespace(t, "acl", Policy{TTL: time.Minute, Fencing: true, RecordHolder: true})
	key := "acl:job:1"
	l, err := n.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)

	exporter := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: password, Protocol: 2})
	defer exporter.Close()
	if got, err := exporter.Get(ctx, lockkeys.Holder(key)).Result(); err != nil || lockkeys.ParseHolder(got).Description != "worker-9 pid 99" {
		t.Errorf("exporter GET holder key = %q, %v; want the holder", got, err)
	}
	if got, err := exporter.Get(ctx, lockkeys.Fence(key)).Int64(); err != nil || got != l.Fence() {
		t.Errorf("exporter GET fence key = %d, %v; want %d", got, err, l.Fence())
	}
	if pttl, err := exporter.PTTL(ctx, lockkeys.Holder(key)).Result(); err != nil || pttl <= 0 {
		t.Errorf("exporter PTTL holder key = %v, %v", pttl, err)
	}
	_, err = exporter.Get(ctx, key).Result()
	if err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("exporter GET lock key = %v, want NOPERM", err)
	}
	if err != nil && strings.Contains(err.Error(), l.token) {
		t.Error("the refusal echoes the token")
	}
}
