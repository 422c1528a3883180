package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
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

// A fence key lost while its lock still holds the lease's token (evicted under a maxmemory
// policy, or deleted by another client: DEL stands for both here, deterministically) refuses
// the holder's FencedSet, which is safe; the lease is still the newest of its lock (nobody
// could have taken the lock meanwhile), so its next renew writes the fence key again, with the
// lease's fence, and the holder's writes apply again. A renew whose lock key is gone too, and
// taken by a newer lease, must not: the newer lease's fence stays.
func TestFenceKeyLostWhileHeldIsWrittenAgainByTheRenew(t *testing.T) {
	srv := redistest.Start(t)
	neighbour := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    Policy
		oom  bool // the renew runs while Redis refuses writes that need memory (noeviction)
	}{
		{"fenced", Policy{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, Fencing: true}, false},
		{"fenced with holder", Policy{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, Fencing: true, RecordHolder: true}, false},
		{"fenced, renewed out of memory", Policy{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, Fencing: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, srv.Addr)
			n := e.namespace(t, "neighbour", tc.p)
			key := uniqueKey(t)
			fenceKey := lockkeys.Fence(key)
			l, err := n.TryAcquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ctx)
			if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "1", 0); err != nil {
				t.Fatalf("FencedSet before the loss: %v", err)
			}
			if err := neighbour.Del(ctx, fenceKey).Err(); err != nil {
				t.Fatal(err)
			}
			if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "2", 0); !errors.Is(err, ErrStaleFence) {
				t.Fatalf("FencedSet with the fence key gone = %v, want ErrStaleFence (refused until the renew)", err)
			}
			if tc.oom {
				setOOM(t, neighbour)
			}
			if err := l.Renew(ctx); err != nil {
				t.Fatalf("Renew: %v", err)
			}
			if tc.oom {
				clearOOM(t, neighbour)
			}
			got, err := neighbour.Get(ctx, fenceKey).Int64()
			if err != nil || got != l.Fence() {
				t.Fatalf("fence key after the renew = %d (%v), want the lease's fence %d", got, err, l.Fence())
			}
			if pttl := neighbour.PTTL(ctx, fenceKey).Val(); pttl <= tc.p.TTL {
				t.Errorf("fence key's PTTL %v, want TTL + FenceRetention", pttl)
			}
			if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "3", 0); err != nil {
				t.Errorf("FencedSet after the renew: %v", err)
			}
			if v := neighbour.Get(ctx, besideLock(key)).Val(); v != "3" {
				t.Errorf("data = %q, want the holder's last write", v)
			}
			e.wantMetrics(t, "neighbour", map[string]float64{
				"lock_fenced_writes_total/applied":  2,
				"lock_fenced_writes_total/rejected": 1,
				"lock_renewals_total/ok":            1,
			})
		})
	}
	t.Run("lock taken by a newer lease", func(t *testing.T) {
		e := newEnv(t, srv.Addr)
		n := e.namespace(t, "neighbour", Policy{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, Fencing: true, OnRenewFailure: Continue})
		key := uniqueKey(t)
		old, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := neighbour.Del(ctx, key, lockkeys.Fence(key)).Err(); err != nil {
			t.Fatal(err)
		}
		newer, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		defer newer.Release(ctx)
		if newer.Fence() <= old.Fence() {
			t.Fatalf("newer fence %d, want above %d", newer.Fence(), old.Fence())
		}
		if err := neighbour.Del(ctx, lockkeys.Fence(key)).Err(); err != nil {
			t.Fatal(err)
		}
		if err := old.Renew(ctx); !errors.Is(err, ErrNotOwned) {
			t.Fatalf("old Renew = %v, want ErrNotOwned", err)
		}
		if n := neighbour.Exists(ctx, lockkeys.Fence(key)).Val(); n != 0 {
			t.Fatalf("the stale lease's renew wrote the fence key")
		}
		if err := newer.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		if err := n.FencedSet(ctx, key, old.Fence(), besideLock(key), "stale", 0); !errors.Is(err, ErrStaleFence) {
			t.Errorf("stale FencedSet = %v, want ErrStaleFence", err)
		}
		if err := n.FencedSet(ctx, key, newer.Fence(), besideLock(key), "newer", 0); err != nil {
			t.Errorf("newer FencedSet: %v", err)
		}
		_ = old.Release(ctx)
	})
}

// setOOM makes Redis refuse every command that needs memory (maxmemory 1 byte, noeviction),
// until clearOOM.
func setOOM(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clearOOM(t, rdb) })
}

func clearOOM(t *testing.T, rdb *redis.Client) {
	t.Helper()
	if err := rdb.ConfigSet(context.Background(), "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
}

// What the lock's Redis does under memory pressure, as docs/lease.md states it. With an
// eviction policy (allkeys-lru here; a volatile-* policy takes lock keys too, since they
// expire) Redis evicts held lock keys: a second holder acquires while the first still believes
// it holds, and only the fence keeps the data safe: the first holder's FencedSet is refused and
// its renew and release say ErrNotOwned. A write-fence record in an evicting Redis is data like
// any other: once evicted, an older fence's Guard.Set lands again. With noeviction, Redis out
// of memory refuses new acquisitions (an error, counted error, never ErrBusy) while held leases
// renew and release as usual.
func TestLockRedisUnderMemoryPressure(t *testing.T) {
	ctx := context.Background()
	p := Policy{TTL: 20 * time.Second, RenewInterval: 19 * time.Second, Fencing: true, RecordHolder: true, OnRenewFailure: Continue}
	t.Run("allkeys-lru evicts held locks", func(t *testing.T) {
		srv := redistest.Start(t)
		neighbour := srv.Client(t)
		e := newEnv(t, srv.Addr)
		n := e.namespace(t, "evicted", p)
		key := uniqueKey(t)
		first, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		guard := n.Guard(nil)
		if err := guard.Claim(ctx, first.Fence(), "data"); err != nil {
			t.Fatal(err)
		}
		fillUntilOOM(t, neighbour, "allkeys-lru")
		for _, k := range []string{key, lockkeys.Fence(key), lockkeys.WriteFence("data")} {
			if neighbour.Exists(ctx, k).Val() != 0 {
				t.Fatalf("%q survived writes until OOM under allkeys-lru: nothing shown", k)
			}
		}
		second, err := n.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("second TryAcquire after the eviction: %v", err)
		}
		defer second.Release(ctx)
		if first.Context().Err() != nil || !time.Now().Before(first.ValidUntil()) {
			t.Fatal("the first holder already knows; the test shows nothing")
		}
		if second.Fence() <= first.Fence() {
			t.Errorf("second fence %d, want above the first's %d", second.Fence(), first.Fence())
		}
		if err := n.FencedSet(ctx, key, first.Fence(), besideLock(key), "stale", 0); !errors.Is(err, ErrStaleFence) {
			t.Errorf("first holder's FencedSet = %v, want ErrStaleFence", err)
		}
		if err := guard.Claim(ctx, second.Fence(), "data"); err != nil {
			t.Fatal(err)
		}
		fillUntilOOM(t, neighbour, "allkeys-lru")
		if err := guard.Set(ctx, first.Fence(), "data", "stale", 0); err != nil {
			t.Errorf("first holder's Guard.Set after the record's eviction = %v, want it applied (the hazard the docs name)", err)
		}
		if err := first.Renew(ctx); !errors.Is(err, ErrNotOwned) {
			t.Errorf("first holder's Renew = %v, want ErrNotOwned", err)
		}
		if err := first.Release(ctx); !errors.Is(err, ErrNotOwned) {
			t.Errorf("first holder's Release = %v, want ErrNotOwned", err)
		}
	})
	t.Run("noeviction refuses acquisitions only", func(t *testing.T) {
		srv := redistest.Start(t)
		neighbour := srv.Client(t)
		for name, p := range map[string]Policy{"set nx": {TTL: 20 * time.Second, RenewInterval: 19 * time.Second}, "fenced, with holder": p} {
			t.Run(name, func(t *testing.T) {
				e := newEnv(t, srv.Addr)
				n := e.namespace(t, "full", p)
				held, err := n.TryAcquire(ctx, uniqueKey(t))
				if err != nil {
					t.Fatal(err)
				}
				setOOM(t, neighbour)
				for _, acquire := range []func(context.Context, string) (*Lease, error){n.TryAcquire, n.Acquire} {
					_, err := acquire(ctx, uniqueKey(t))
					if err == nil || errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "OOM command not allowed") || strings.Contains(err.Error(), "\n") {
						t.Errorf("acquire out of memory = %v, want Redis's OOM error on one line", err)
					}
				}
				if err := held.Renew(ctx); err != nil {
					t.Errorf("Renew out of memory: %v", err)
				}
				if err := held.Release(ctx); err != nil {
					t.Errorf("Release out of memory: %v", err)
				}
				clearOOM(t, neighbour)
				e.wantMetrics(t, "full", map[string]float64{
					"lock_acquire_wait_seconds/error":    2,
					"lock_acquire_wait_seconds/busy":     0,
					"lock_acquire_wait_seconds/acquired": 1,
					"lock_renewals_total/ok":             1,
					"lock_releases_total/ok":             1,
					"lock_held":                          0,
				})
			})
		}
	})
}

// fillUntilOOM sets maxmemory to what Redis uses now under policy and writes new keys until
// Redis answers OOM, that is until it has nothing left to evict; then lifts maxmemory.
func fillUntilOOM(t *testing.T, rdb *redis.Client, policy string) {
	t.Helper()
	ctx := context.Background()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var mem string
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			mem = v
		}
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", policy).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", mem).Err(); err != nil {
		t.Fatal(err)
	}
	defer clearOOM(t, rdb)
	for i := range 10_000 {
		err := rdb.Set(ctx, fmt.Sprintf("filler:%d", i), strings.Repeat("x", 2000), 0).Err()
		if err != nil && strings.HasPrefix(err.Error(), "OOM") {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no OOM after 10,000 writes")
}

// Another client kills every normal connection (CLIENT KILL TYPE normal), again and again,
// while workers take and release fenced locks on a few keys. go-redis retries a command whose
// connection died; when Redis had run it, the retry sees its effect: a release then says
// ErrNotOwned (the key is gone: this release deleted it), an acquire ErrBusy, as docs/lease.md
// says. What must hold whatever the kills hit: one holder per key at a time, fences rising per
// key in the order the leases were granted, and every acquired lease's release counted once
// as ok, not_owned or error.
func TestNeighbourClientKillKeepsOneHolder(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		neighbour := srv.Client(t)
		ctx := context.Background()
		e := newEnvMode(t, srv.Addr, single)
		n := e.namespace(t, "killed", Policy{TTL: 5 * time.Second, RenewInterval: 4 * time.Second, Fencing: true, RecordHolder: true})
		const keys, workers = 4, 12
		var (
			mu        sync.Mutex
			holding   [keys]bool
			lastFence [keys]int64
			acquired  int
		)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					k := (w + i) % keys
					l, err := n.TryAcquire(ctx, fmt.Sprintf("killed:%d", k))
					if err != nil {
						continue // busy, or a connection error the retries did not cover
					}
					mu.Lock()
					acquired++
					if holding[k] {
						t.Errorf("key %d: two holders at once", k)
					}
					if l.Fence() <= lastFence[k] {
						t.Errorf("key %d: fence %d after %d", k, l.Fence(), lastFence[k])
					}
					holding[k], lastFence[k] = true, l.Fence()
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					holding[k] = false
					mu.Unlock()
					_ = l.Release(ctx)
				}
			})
		}
		for range 10 {
			time.Sleep(40 * time.Millisecond)
			if err := neighbour.Do(ctx, "client", "kill", "type", "normal").Err(); err != nil {
				t.Error(err)
			}
		}
		close(stop)
		wg.Wait()
		if acquired == 0 {
			t.Fatal("no lease acquired")
		}
		released := e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "ok") +
			e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "not_owned") +
			e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "error")
		e.wantMetrics(t, "killed", map[string]float64{
			"lock_acquire_wait_seconds/acquired": float64(acquired),
			"lock_held":                          0,
		})
		if released != float64(acquired) {
			t.Errorf("releases counted %v, want one per acquired lease: %d", released, acquired)
		}
		t.Logf("%d leases; releases ok %v, not_owned %v, error %v", acquired,
			e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "ok"),
			e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "not_owned"),
			e.metric(t, "lock_releases_total", namespaceLabel, "killed", "outcome", "error"))
	})
}

// Another client wrote something that is not a fence into a data key's write-fence record
// ({key}:writefence). Claim and Set must refuse without writing, with an error that names the
// record and says what is wrong with it (it was Lua's "attempt to compare number with nil"),
// and count no fenced write.
func TestGuardWithAForeignWriteFenceRecordSaysSo(t *testing.T) {
	srv := redistest.Start(t)
	neighbour := srv.Client(t)
	ctx := context.Background()
	e := newEnv(t, srv.Addr)
	n := e.namespace(t, "neighbour", Policy{TTL: 10 * time.Second, Fencing: true})
	l, err := n.TryAcquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	guard := n.Guard(nil)
	record := lockkeys.WriteFence("data")
	if err := neighbour.Set(ctx, record, "not a fence", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Claim": func() error { return guard.Claim(ctx, l.Fence(), "data") },
		"Set":   func() error { return guard.Set(ctx, l.Fence(), "data", "v", 0) },
	} {
		err := call()
		if err == nil || errors.Is(err, ErrStaleFence) || !strings.Contains(err.Error(), record) ||
			!strings.Contains(err.Error(), "holds no fence") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s = %v, want one line naming %s and saying it holds no fence", name, err, record)
		}
	}
	if v := neighbour.Get(ctx, record).Val(); v != "not a fence" {
		t.Errorf("record = %q, want the neighbour's value untouched", v)
	}
	if n := neighbour.Exists(ctx, "data").Val(); n != 0 {
		t.Error("the data key was written")
	}
	e.wantMetrics(t, "neighbour", map[string]float64{
		"lock_fenced_writes_total/applied":  0,
		"lock_fenced_writes_total/rejected": 0,
	})
}

// Another client flushes the script cache (SCRIPT FLUSH; FUNCTION FLUSH alongside, which lease
// does not use) while leases are held: every script of the library, not only acquire's and
// release's (TestScriptFallback), is sent again by source, on its own and in the sender's
// pipelines, and does what it would have done: renews, fenced writes, claims, guarded writes,
// releases.
func TestEveryScriptSurvivesAScriptFlush(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		neighbour := srv.Client(t)
		ctx := context.Background()
		evals := &faultHook{match: func(args []any) bool { return len(args) > 0 && args[0] == "eval" }}
		e := newEnvMode(t, srv.Addr, single, evals)
		n := e.namespace(t, "flushed", Policy{TTL: 10 * time.Second, RenewInterval: 9 * time.Second, Fencing: true, RecordHolder: true})
		guard := n.Guard(nil)
		const leases = 12
		var ls []*Lease
		for i := range leases {
			l, err := n.Acquire(ctx, fmt.Sprintf("flushed:%d", i))
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
		}
		flush := func() {
			t.Helper()
			if err := neighbour.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if err := neighbour.Do(ctx, "function", "flush").Err(); err != nil {
				t.Fatal(err)
			}
			evals.calls.Store(0)
		}
		each := func(what string, call func(i int, l *Lease) error) {
			t.Helper()
			flush()
			var wg sync.WaitGroup
			for i, l := range ls {
				wg.Go(func() {
					if err := call(i, l); err != nil {
						t.Errorf("%s after SCRIPT FLUSH: %v", what, err)
					}
				})
			}
			wg.Wait()
			if evals.calls.Load() == 0 {
				t.Errorf("%s: no EVAL sent after the flush: the scripts were not missing", what)
			}
		}
		each("Renew", func(_ int, l *Lease) error { return l.Renew(ctx) })
		each("FencedSet", func(_ int, l *Lease) error {
			return n.FencedSet(ctx, l.Key(), l.Fence(), besideLock(l.Key()), "v", 0)
		})
		each("Guard.Claim", func(i int, l *Lease) error { return guard.Claim(ctx, l.Fence(), fmt.Sprintf("data:%d", i)) })
		each("Guard.Set", func(i int, l *Lease) error { return guard.Set(ctx, l.Fence(), fmt.Sprintf("data:%d", i), "v", 0) })
		each("Release", func(_ int, l *Lease) error { return l.Release(ctx) })
		e.wantMetrics(t, "flushed", map[string]float64{
			"lock_renewals_total/ok":           leases,
			"lock_renewals_total/failed":       0,
			"lock_fenced_writes_total/applied": 2 * leases,
			"lock_releases_total/ok":           leases,
			"lock_releases_total/error":        0,
			"lock_held":                        0,
		})
		if keys := neighbour.Keys(ctx, "flushed:*").Val(); len(keys) != 0 {
			t.Errorf("lock keys left: %v", keys)
		}
	})
}
