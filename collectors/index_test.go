package collectors

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

var indexNamespaces = []Namespace{
	{Name: "jobs", Pattern: "jobs:*"},
	{Name: "deploy", Pattern: "jobs:deploy:*"}, // overlaps jobs: a key counts in both
	{Name: "companions", Pattern: "{jobs:*"},   // the lease library's fence and holder keys
	{Name: "hashes", Pattern: "h:*", Types: []string{TypeHash}},
	{Name: "suffix", Pattern: "*:lock"}, // no literal prefix: walked
	// Hold ages from the locks' holder records ({jobs:1}:holder), served by the index too.
	{Name: "held", Pattern: "jobs:*", ExpectedMaxHold: time.Minute},
}

func TestIndexModesAndFallback(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	s := indexed(t, c, indexNamespaces)
	res := s.Scan(context.Background())
	for _, ns := range res.Namespaces {
		wantMode, wantWhy := modeIndex, ""
		if ns.Namespace.Name == "suffix" {
			wantMode, wantWhy = modeWalk, reasonNoLiteralPrefix
		}
		if ns.Mode != wantMode || ns.ModeReason != wantWhy {
			t.Errorf("%s: mode %s/%s, want %s/%s", ns.Namespace.Name, ns.Mode, ns.ModeReason, wantMode, wantWhy)
		}
	}
	w, err := NewScanner(c, Options{Namespaces: indexNamespaces, Mode: ModeWalk})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, ns := range w.Scan(context.Background()).Namespaces {
		if ns.Mode != modeWalk || ns.ModeReason != reasonWalkConfigured {
			t.Errorf("walk mode: %s: %s/%s", ns.Namespace.Name, ns.Mode, ns.ModeReason)
		}
	}
}

// TestIndexTrackingRefusedByACL: a user without CLIENT TRACKING gets the walk, with the reason;
// a user with the documented grants gets the index. A user without one of the other grants the
// index needs (INFO, TIME, PEXPIRETIME) is refused the index too: its builds failed on NOPERM
// and were retried for ever, silently (debug level), the namespaces walked with the reason
// index_unavailable.
func TestIndexTrackingRefusedByACL(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	walkGrants := []any{"+scan", "+dbsize", "+pttl", "+object|idletime", "+type", "+get", "+ping", "+hello", "+info"}
	indexGrants := append(append([]any{}, walkGrants...), "+client|tracking", "+time", "+pexpiretime")
	users := map[string]struct {
		grants []any
		want   string
	}{
		"walker":  {walkGrants, modeWalk},
		"tracker": {indexGrants, modeIndex},
	}
	for _, missing := range []string{"+info", "+time", "+pexpiretime"} {
		users["no"+missing[1:]] = struct {
			grants []any
			want   string
		}{slices.DeleteFunc(slices.Clone(indexGrants), func(g any) bool { return g == missing }), modeWalk}
	}
	for user, u := range users {
		args := append([]any{"ACL", "SETUSER", user, "on", ">pw", "resetkeys", "~jobs:*", "~{jobs:*", "~h:*", "-@all"}, u.grants...)
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	admin.Set(ctx, "jobs:1", "t", time.Minute)
	namespaces := indexNamespaces[:2]
	for user, u := range users {
		t.Run(user, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
			defer c.Close()
			s, err := NewScanner(c, Options{Namespaces: namespaces, Mode: ModeAuto})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				res := s.Scan(ctx)
				ns := res.Namespaces[0]
				if res.Up && ns.Mode == u.want && (u.want == modeIndex || ns.ModeReason == reasonTrackingRefused) {
					if ns.Keys != 1 {
						t.Errorf("%s: %d keys, want 1", user, ns.Keys)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: want mode %s, got %+v (up %v %v)", user, u.want, modes(res), res.Up, res.Err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// resyncCase is one trigger of a resync: an action the change feed cannot follow.
type resyncCase struct {
	name   string
	reason string
	act    func(t *testing.T, srv *redistest.Server, c *redis.Client, s *Scanner)
}

func TestIndexResyncs(t *testing.T) {
	ctx := context.Background()
	cases := []resyncCase{
		{"tracking connection killed", index.ResyncConnectionLost, func(t *testing.T, _ *redistest.Server, c *redis.Client, _ *Scanner) {
			if err := c.Do(ctx, "CLIENT", "KILL", "ID", testkit.TrackingClientID(t, c)).Err(); err != nil {
				t.Fatal(err)
			}
			c.Set(ctx, "jobs:after-kill", "t", time.Minute)
		}},
		{"FLUSHDB of another database", index.ResyncFlush, func(t *testing.T, srv *redistest.Server, _ *redis.Client, _ *Scanner) {
			other := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 5})
			defer other.Close()
			other.Set(ctx, "x", "y", 0)
			if err := other.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"SWAPDB", index.ResyncSwapDB, func(t *testing.T, srv *redistest.Server, c *redis.Client, _ *Scanner) {
			other := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 1})
			defer other.Close()
			for i := range 7 {
				other.Set(ctx, fmt.Sprintf("jobs:db1:%d", i), "t", 0)
			}
			if err := c.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"restart without persistence", index.ResyncConnectionLost, func(t *testing.T, srv *redistest.Server, c *redis.Client, _ *Scanner) {
			srv.Restart()
			for i := range 3 {
				c.Set(ctx, fmt.Sprintf("jobs:reborn:%d", i), "t", time.Minute)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client(t)
			for i := range 20 {
				c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(i+10)*time.Second)
			}
			s := indexed(t, c, indexNamespaces)
			compareNow(t, s, c, "build")
			tc.act(t, srv, c, s)
			deadline := time.Now().Add(20 * time.Second)
			for {
				res := s.Scan(ctx)
				if res.IndexResyncs[tc.reason] > 0 && res.Up && indexCurrent(s, res) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %s resync: %v %+v", tc.reason, res.IndexResyncs, modes(res))
				}
				time.Sleep(20 * time.Millisecond)
			}
			compareNow(t, s, c, tc.name)
		})
	}
}

// TestIndexServesLastCompleteIndexDuringResync: while the index cannot be rebuilt, a scrape
// serves the last complete one and says how old it is.
func TestIndexServesLastCompleteIndexDuringResync(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	c.Set(ctx, "jobs:1", "t", time.Minute)
	s := indexed(t, c, indexNamespaces[:1])
	// A user that may no longer run CLIENT TRACKING: the resync cannot open a feed.
	if err := c.Do(ctx, "CLIENT", "KILL", "ID", testkit.TrackingClientID(t, c)).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := s.Scan(ctx)
		ns := res.Namespaces[0]
		if res.Up && ns.Indexed && ns.Keys == 1 && ns.IndexAge > 0 {
			break // served stale, and said so
		}
		if res.Up && ns.IndexAge == 0 && res.IndexResyncs[index.ResyncConnectionLost] > 0 {
			break // the resync was faster than this loop: also correct
		}
		if time.Now().After(deadline) {
			t.Fatalf("%+v", modes(res))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIndexDifferential changes the keyspace at random, with faults, and after each step checks
// that every figure the index serves equals a fresh walk's.
func TestIndexDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("bounded-time differential run")
	}
	ctx := context.Background()
	// DEBUG SLEEP stalls the server as a busy Lua script or a fork would; the harness's servers
	// refuse DEBUG unless it is enabled.
	srv := redistest.Start(t, redistest.WithArgs("--enable-debug-command", "local"))
	c := srv.Client(t)
	seed := newSeeder(t, c)
	seedTime := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seedTime), 23))
	t.Logf("seed time %v", seedTime)
	key := func() string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprintf("jobs:deploy:%d", rng.IntN(40))
		default:
			return fmt.Sprintf("jobs:%d", rng.IntN(150))
		}
	}
	ttl := func() time.Duration {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return time.Duration(20+rng.IntN(150)) * time.Millisecond // expires during the step
		default:
			return time.Duration(10+rng.IntN(60)) * time.Second
		}
	}
	for range 100 {
		seed.key(t, key(), ttl(), rng.IntN(300))
	}
	s := indexed(t, c, indexNamespaces)
	time.Sleep(200 * time.Millisecond) // the short TTLs have passed: nothing expires mid-check
	mismatches := compareNow(t, s, c, "build")
	steps, heldSteps := map[string]int{}, 0
	end := time.Now().Add(40 * time.Second)
	for step := 0; time.Now().Before(end); step++ {
		op := "churn"
		switch step % 12 {
		case 3:
			op = "flushdb-other"
			other := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 4})
			other.Set(ctx, "jobs:elsewhere", "t", 0)
			other.FlushDB(ctx)
			other.Close()
		case 5:
			op = "swapdb"
			other := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 1})
			other.Set(ctx, fmt.Sprintf("jobs:swapped:%d", step), "t", time.Minute)
			other.Close()
			c.Do(ctx, "SWAPDB", 0, 1)
		case 7:
			op = "client-kill"
			c.Do(ctx, "CLIENT", "KILL", "ID", testkit.TrackingClientID(t, c))
		case 8:
			op = "debug-sleep"
			if err := c.Do(ctx, "DEBUG", "SLEEP", "0.3").Err(); err != nil {
				t.Fatalf("DEBUG SLEEP: %v", err)
			}
		case 9:
			op = "eviction"
			used, _ := c.Info(ctx, "memory").Result()
			mem := index.InfoField(used, "used_memory")
			c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru")
			c.Do(ctx, "CONFIG", "SET", "maxmemory", mem)
			for i := range 20 {
				c.Set(ctx, fmt.Sprintf("filler:%d:%d", step, i), string(make([]byte, 20000)), 0)
			}
			c.ConfigSet(ctx, "maxmemory", "0")
		case 11:
			op = "restart"
			srv.Restart()
			seed = newSeeder(t, c)
			for range 30 {
				seed.key(t, key(), ttl(), rng.IntN(300))
			}
		}
		for range 40 {
			k := key()
			switch rng.IntN(10) {
			case 0, 1:
				c.Set(ctx, k, "t", ttl())
			case 2:
				seed.key(t, k, ttl(), rng.IntN(600))
			case 3:
				c.PExpire(ctx, k, time.Duration(10+rng.IntN(60))*time.Second)
			case 4:
				c.Persist(ctx, k)
			case 5:
				c.Del(ctx, k)
			case 6:
				c.Rename(ctx, k, key())
			case 7:
				c.Get(ctx, k) // touches the key: no change-feed message
			case 8:
				// A holder record as lease writes it (with the acquisition time, on the
				// server's clock: the test's host), as older lease versions wrote it (without),
				// or gone while its lock stays: only the holder key changes.
				switch holder := lockkeys.Holder(k); rng.IntN(3) {
				case 0:
					acquired := time.Now().Add(-time.Duration(rng.IntN(600_000)) * time.Millisecond)
					c.Set(ctx, holder, fmt.Sprintf("worker-%d\t%d", rng.IntN(9), acquired.UnixMilli()), 0)
				case 1:
					c.Set(ctx, holder, fmt.Sprintf("worker-%d", rng.IntN(9)), 0)
				case 2:
					c.Del(ctx, holder)
				}
				c.Incr(ctx, lockkeys.Fence(k))
			case 9:
				c.HSet(ctx, fmt.Sprintf("h:%d", rng.IntN(10)), "owner", "x")
				c.LPush(ctx, "jobs:list", "x") // a type no namespace counts
			}
		}
		time.Sleep(200 * time.Millisecond) // the short TTLs have passed: nothing expires mid-check
		steps[op]++
		mismatches += compareNow(t, s, c, fmt.Sprintf("step %d (%s)", step, op))
		if held := s.Scan(ctx).Namespaces[len(indexNamespaces)-1]; held.HasHeld {
			heldSteps++
		}
	}
	res := s.Scan(ctx)
	t.Logf("steps %v; resyncs %v; steps with hold ages %d; mismatches %d", steps, res.IndexResyncs, heldSteps, mismatches)
	if heldSteps == 0 {
		t.Error("no step had a hold age to compare")
	}
}

// TestIndexFeedDrainedBetweenScrapes: with no scrape at all, the feed loop keeps reading the
// tracking connection, so the server's output buffer for it empties after a burst of writes. (A
// burst the feed cannot read within feedCommandTimeout drops the feed and resyncs: the new
// tracking connection's buffer must then be empty too.)
func TestIndexFeedDrainedBetweenScrapes(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	indexed(t, c, indexNamespaces[:1])
	// About 40 MB of invalidation messages: more than the loopback socket's buffers hold, so an
	// unread feed would leave the rest in the server's output buffer.
	name := strings.Repeat("a-long-name-to-fill-the-buffer-", 3)
	for round := range 150 {
		pipe := c.Pipeline()
		for i := range 2000 {
			pipe.Set(ctx, fmt.Sprintf("jobs:%d:%d:%s", round, i, name), "t", time.Minute)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The feed loop catches up within ticks; an unread feed never empties the buffer. How many
	// ticks depends on the machine: beside CPU hogs under -race the 300,000 re-reads (and a
	// resync, when the feed connection's reads time out meanwhile) take more than 30 s.
	waitFor(t, 3*time.Minute, "the tracking connection's output buffer to empty", func() bool {
		list, err := c.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(list, "\n") {
			if strings.Contains(line, " flags=t") { // t: tracking, with B: broadcasting
				return strings.Contains(line, " omem=0 ")
			}
		}
		return false // between two feeds
	})
}

// TestIndexKeyBudget: a namespace past the index key budget is walked, and says why.
func TestIndexKeyBudget(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	for i := range 30 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Minute)
	}
	c.Set(ctx, "jobs:deploy:1", "t", time.Minute)
	s, err := NewScanner(c, Options{Namespaces: indexNamespaces[:2], Mode: ModeAuto, IndexKeyBudget: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitFor(t, 10*time.Second, "the budget to send jobs back to the walk", func() bool {
		res := s.Scan(ctx)
		jobs, deploy := res.Namespaces[0], res.Namespaces[1]
		return res.Up && jobs.Mode == modeWalk && jobs.ModeReason == reasonKeyBudget && jobs.Keys == 31 &&
			deploy.Mode == modeIndex && deploy.Keys == 1 && deploy.IndexAge == 0
	})
}

// TestIndexGrantRevoked: a grant the index needs, revoked after its build (ACL SETUSER … -info),
// sends the namespaces to the walk with the reason, as a user without it from the start gets.
// The scrape failed on NOPERM instead, and lock_exporter_up stayed 0 (LockExporterRedisDown)
// while the walk could read every key.
func TestIndexGrantRevoked(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "exporter", "on", ">pw", "resetkeys", "~jobs:*", "~{jobs:*", "-@all",
		"+scan", "+dbsize", "+pttl", "+object|idletime", "+type", "+get", "+ping", "+hello", "+info",
		"+client|tracking", "+time", "+pexpiretime").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "jobs:1", "t", time.Minute)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "exporter", Password: "pw"})
	defer c.Close()
	s := indexed(t, c, indexNamespaces[:1])
	if err := admin.Do(ctx, "ACL", "SETUSER", "exporter", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := s.Scan(ctx)
		ns := res.Namespaces[0]
		if res.Up && ns.Mode == modeWalk && ns.ModeReason == reasonTrackingRefused && ns.Keys == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after -info: up %v (%v), %+v, %d keys; want the walk, tracking_refused", res.Up, res.Err, modes(res), ns.Keys)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
