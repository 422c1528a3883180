package collectors

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexIdentityReadCommands counts the INFO commands of one reading of the server's identity
// by an index built on Redis 7 or later, which takes several INFO sections in one call, and
// checks that the one reply gives every field the separate sections gave.
func TestIndexIdentityReadCommands(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	counter := newCommandCounter()
	c.AddHook(counter)
	if err := c.Set(context.Background(), "jobs:1", "token", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := indexed(t, c, []Namespace{{Name: "jobs", Pattern: "jobs:*"}})
	n := nodeOf(s)
	version := index.InfoField(c.Info(context.Background(), "server").Val(), "redis_version")
	if major, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0]); major < 7 {
		t.Skipf("redis-server %s: the test needs Redis 7 or later", version)
	}
	tests := []struct {
		name  string
		reads int
	}{
		{"one reading", 1},
		{"ten readings", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id index.ServerIdentity
			var err error
			var got int
			holdingSync(n, func() {
				before := counter.get("info")
				for range tt.reads {
					if id, err = identityRead(context.Background(), n); err != nil {
						break
					}
				}
				got = counter.get("info") - before
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.reads {
				t.Errorf("%d INFO commands for %d identity readings, want %d", got, tt.reads, tt.reads)
			}
			assertIdentityFields(t, c, id)
		})
	}
}

// assertIdentityFields checks id against the INFO sections read one at a time.
func assertIdentityFields(t *testing.T, c *redis.Client, id index.ServerIdentity) {
	t.Helper()
	ctx := context.Background()
	server, repl := c.Info(ctx, "server").Val(), c.Info(ctx, "replication").Val()
	if want := index.InfoField(server, "run_id"); id.RunID != want || want == "" {
		t.Errorf("run_id %q, want %q", id.RunID, want)
	}
	if want := index.InfoField(repl, "role"); id.Role != want || want == "" {
		t.Errorf("role %q, want %q", id.Role, want)
	}
	if want := strings.SplitN(index.InfoField(server, "redis_version"), ".", 2)[0]; want == "" || id.Major < 7 {
		t.Errorf("major %d, redis_version %q", id.Major, index.InfoField(server, "redis_version"))
	}
	if id.Commands["info"].Calls == 0 {
		t.Errorf("no command counts read: %v", id.Commands)
	}
}

// olderServerInfo makes the server answer an INFO of several sections as servers before 7 do,
// with a syntax error: the command is rewritten to a script that replies with that error.
type olderServerInfo struct{ redishook.PassThrough }

func (olderServerInfo) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if args := cmd.Args(); cmd.Name() == "info" && len(args) == 4 {
				args[0], args[1], args[2], args[3] = "eval", "return redis.error_reply('ERR syntax error')", "0", "-"
			}
		}
		return next(ctx, cmds)
	}
}

// TestIndexIdentityOlderServer checks that an index built from Redis 7 still reads the identity
// of a server that takes one INFO section at a time, as one that replaced it at the same address
// would: the identity is read, and it says which server it is.
func TestIndexIdentityOlderServer(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	if err := c.Set(context.Background(), "jobs:1", "token", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := indexed(t, c, []Namespace{{Name: "jobs", Pattern: "jobs:*"}})
	n := nodeOf(s)
	c.AddHook(olderServerInfo{})
	var id index.ServerIdentity
	var err error
	holdingSync(n, func() { id, err = identityRead(context.Background(), n) })
	if err != nil {
		t.Fatal(err)
	}
	assertIdentityFields(t, c, id)
}

// TestIndexExpiryReadCommands counts the expiry commands the index sends on Redis 7 or later:
// its build, its re-reads of written keys and its backstop walk read each key's PEXPIRETIME and
// no PTTL, with one TIME a batch for the TTLs; and the index still serves what a walk reads.
func TestIndexExpiryReadCommands(t *testing.T) {
	const locks = 40
	ctx := context.Background()
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	counter := newCommandCounter()
	c.AddHook(counter)
	ns := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	write := func(from int) {
		pipe := c.Pipeline()
		for i := from; i < from+locks; i++ {
			ttl := time.Duration(i%4) * time.Minute // every fourth without expiry
			pipe.Set(ctx, fmt.Sprintf("jobs:%d", i), "token", ttl)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	s, err := NewScanner(c, Options{Namespaces: ns, Mode: ModeAuto, BackstopEvery: time.Hour, recordHoldAgesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	n := nodeOf(s)
	tests := []struct {
		name string
		run  func()
	}{
		{"build", func() { waitBuilt(t, n) }},
		{"re-read of written keys", func() { write(locks); reread(t, n, counter, locks, 2*locks) }},
		{"backstop walk", func() { runBackstop(ctx, n) }},
	}
	for _, tt := range tests {
		before := map[string]int{"pttl": counter.get("pttl"), "pexpiretime": counter.get("pexpiretime")}
		tt.run()
		if !readsExpireTime(n) {
			t.Skip("the test needs Redis 7 or later")
		}
		if got := counter.get("pttl") - before["pttl"]; got != 0 {
			t.Errorf("%s: %d PTTL commands, want 0", tt.name, got)
		}
		if got := counter.get("pexpiretime") - before["pexpiretime"]; got < locks {
			t.Errorf("%s: %d PEXPIRETIME commands, want at least %d", tt.name, got, locks)
		}
	}
	matchesFreshWalk(t, s, c, ns)
}

// waitBuilt waits, without scraping (a scrape before the build would walk), until n's index is
// built.
func waitBuilt(t *testing.T, n *indexNode) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if built, _ := buildSettled(n); built {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("index not built after 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reread re-reads the keys jobs:from to jobs:to-1 into n's index, as a drain does when the feed
// names them (syncMu held: no drain runs meanwhile), and checks that the commands of the re-read read no TIME: the index keeps expiry
// times, not TTLs.
func reread(t *testing.T, n *indexNode, counter *commandCounter, from, to int) {
	t.Helper()
	var keys []string
	for i := from; i < to; i++ {
		keys = append(keys, fmt.Sprintf("jobs:%d", i))
	}
	var err error
	var times int
	holdingSync(n, func() {
		before := counter.get("time")
		err = rereadKeys(context.Background(), n, keys)
		times = counter.get("time") - before
	})
	if err != nil {
		t.Fatal(err)
	}
	if times != 0 {
		t.Errorf("re-read of %d keys: %d TIME commands, want 0", len(keys), times)
	}
}
