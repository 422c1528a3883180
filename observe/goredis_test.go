package observe

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// observeJobs hooks onto rdb an Observer of the namespace "jobs" (jobs:*) on a fresh registry,
// and returns the registry.
func observeJobs(t *testing.T, rdb *redis.Client) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	obs, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	rdb.AddHook(obs.Hook())
	return reg
}

// A hand-made lock on a real server through the go-redis hook: SET NX PX to acquire, a
// compare-and-pexpire and a compare-and-delete script (go-redis sends EVALSHA, falls back to
// EVAL on NOSCRIPT), some of them pipelined.
func TestGoRedisHookOnRealServer(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := observeJobs(t, rdb)
	release := redis.NewScript(testRelease)
	refresh := redis.NewScript(testRefresh)
	const valueA, valueB, valueC = "secret-value-A-7f3a", "secret-value-B-91c2", "secret-value-C-5d0e"

	if ok, err := rdb.SetNX(ctx, "jobs:1", valueA, 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	if ok, _ := rdb.SetNX(ctx, "jobs:1", valueB, 10*time.Second).Result(); ok {
		t.Fatal("second acquire succeeded")
	}
	if err := refresh.Run(ctx, rdb, []string{"jobs:1"}, valueA, 10000).Err(); err != nil {
		t.Fatal(err)
	}
	if got := value(t, reg, "lock_held", "jobs", ""); got != 1 {
		t.Fatalf("lock_held = %v while A holds, want 1", got)
	}
	// C's stale release (a value that held the lock before, in another process) is refused;
	// A's release works; B then acquires, pipelined with an unrelated command that must pass
	// uncounted.
	if n, _ := release.Run(ctx, rdb, []string{"jobs:1"}, valueC).Int(); n != 0 {
		t.Fatal("C released A's lock")
	}
	if n, _ := release.Run(ctx, rdb, []string{"jobs:1"}, valueA).Int(); n != 1 {
		t.Fatal("A could not release")
	}
	pipe := rdb.Pipeline()
	pipe.Incr(ctx, "jobs:counter")
	setB := pipe.SetNX(ctx, "jobs:1", valueB, 10*time.Second)
	if _, err := pipe.Exec(ctx); err != nil || !setB.Val() {
		t.Fatalf("pipelined acquire: %v %v", setB.Val(), err)
	}
	if err := release.Run(ctx, rdb, []string{"jobs:1"}, valueB).Err(); err != nil {
		t.Fatal(err)
	}
	// Outside every namespace: not counted.
	rdb.SetNX(ctx, "other:1", valueA, time.Second)

	checkJobs(t, reg,
		jobsValue{"lock_held", "", 0},
		jobsValue{"lock_releases_total", "ok", 2},
		jobsValue{"lock_releases_total", "not_owned", 1},
		jobsValue{"lock_renewals_total", "ok", 1},
	)
	if n, _ := histogram(t, reg, "lock_acquire_wait_seconds", "jobs", "acquired"); n != 2 {
		t.Errorf("acquired waits %d, want 2", n)
	}
	if n, _ := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != 2 {
		t.Errorf("holds %d, want 2", n)
	}
	assertNoToken(t, reg, valueA, valueB, valueC)
}

// A server paused past the client's read timeout: the renew fails and the release errors.
func TestGoRedisHookServerPaused(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	reg := observeJobs(t, rdb)
	// Load the scripts first, so that the paused calls are the operations, not a NOSCRIPT.
	release, refresh := redis.NewScript(testRelease), redis.NewScript(testRefresh)
	for _, s := range []*redis.Script{release, refresh} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.SetNX(ctx, "jobs:1", "v", 30*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	defer srv.Resume()
	if err := refresh.EvalSha(ctx, rdb, []string{"jobs:1"}, "v", 30000).Err(); err == nil {
		t.Fatal("refresh answered while the server was paused")
	}
	if err := release.EvalSha(ctx, rdb, []string{"jobs:1"}, "v").Err(); err == nil {
		t.Fatal("release answered while the server was paused")
	}
	srv.Resume()
	checkJobs(t, reg,
		jobsValue{"lock_renewals_total", "failed", 1},
		jobsValue{"lock_releases_total", "error", 1},
		// A release lost in transit leaves the key to its TTL.
		jobsValue{"lock_held", "", 1},
	)
}

// assertNoToken scrapes the registry as Prometheus would and fails when a lock value shows.
func assertNoToken(t *testing.T, reg *prometheus.Registry, values ...string) {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if !bytes.Contains(body, []byte("lock_acquire_wait_seconds")) {
		t.Fatal("scrape has no lock metrics")
	}
	for _, v := range values {
		if bytes.Contains(body, []byte(v)) {
			t.Fatalf("scrape output contains the lock value %q", v)
		}
	}
}

// A command handed over with its context already done never reaches the server: no outcome.
func TestGoRedisHookSkipsCommandsWithDoneContext(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := observeJobs(t, rdb)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := redis.NewScript(testRelease).Run(ctx, rdb, []string{"jobs:1"}, "v").Err(); err == nil {
		t.Fatal("a cancelled release answered")
	}
	if got := value(t, reg, "lock_releases_total", "jobs", "error"); got != 0 {
		t.Fatalf("a release that was never sent counted as %v errors", got)
	}
}

// Commands that are not lock commands cost the hook no allocation.
func TestUnrecognisedCommandsDoNotAllocate(t *testing.T) {
	o, _, _ := newTestObserver(t, Options{})
	tests := []goRedisArgs{
		{"get", "jobs:1"},
		{"hset", "jobs:1", "f", "v"},
		{"set", "cache:1", "v", "nx", "px", int64(1000)},
		{"evalsha", "0000000000000000000000000000000000000000", 1, "jobs:1", "v"},
		{"del", "cache:1"},
		{"unlink", "cache:1", "cache:2"},
	}
	for _, args := range tests {
		if n := testing.AllocsPerRun(100, func() {
			if begin(o, args, nil) != nil {
				t.Fatalf("%v recognised", args)
			}
		}); n != 0 {
			t.Errorf("%v: %v allocations per command, want 0", args, n)
		}
	}
}

// A lock cycle in go-redis' argument types (integers for EVALSHA's key count and SET's PX, as
// go-redis builds them for redsync's SET NX and redislock's scripts) costs the hook no
// allocation: an integer is read as it is, not formatted into a string first.
func TestLockCycleDoesNotAllocate(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{})
	cycles := []struct{ name, acquireSHA string }{
		{"redsync", ""},
		{"redislock", "80a1b5f2cfccec3b7119ba7721d2127682b691a7"},
	}
	for _, c := range cycles {
		acquire := goRedisArgs{"set", "jobs:1", "v", "px", int64(10000), "nx"}
		if c.acquireSHA != "" {
			// redislock v0.9.4 sends its TTL as a string, its token length as an int.
			acquire = goRedisArgs{"evalsha", c.acquireSHA, 1, "jobs:1", "v", 22, "10000"}
		}
		release := goRedisArgs{"evalsha", "e950836ed1e694540c503ef9972b8de518044d3b", 1, "jobs:1", "v"}
		before := value(t, reg, "lock_releases_total", "jobs", "ok")
		n := testing.AllocsPerRun(100, func() {
			a := begin(o, acquire, nil)
			if a == nil {
				t.Fatalf("%s: acquire %v not recognised", c.name, acquire)
			}
			a.Done(Reply{})
			clock.advance(time.Millisecond)
			begin(o, release, nil).Done(Reply{Int: 1, IsInt: true})
		})
		if n != 0 && !raceEnabled {
			t.Errorf("%s: %v allocations per lock cycle, want 0", c.name, n)
		}
		if got := value(t, reg, "lock_releases_total", "jobs", "ok") - before; got != 101 {
			t.Errorf("%s: %v releases counted over 101 cycles", c.name, got)
		}
	}
}
