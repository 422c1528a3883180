package index

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexIdentityReadCommands counts the INFO commands of one reading of the server's identity
// by an index built on Redis 7 or later, which takes several INFO sections in one call, and
// checks that the one reply gives every field the separate sections gave.
func TestIndexIdentityReadCommands(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	counter := redishook.NewCommandCounter()
	c.AddHook(counter)
	if err := c.Set(context.Background(), "jobs:1", "token", 0).Err(); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, c, testNodeOptions(nodeTestNamespaces, nil))
	version := InfoField(c.Info(context.Background(), "server").Val(), "redis_version")
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
			var id ServerIdentity
			var err error
			var got int
			n.syncMu.Lock() // as the feed loop reads it
			before := counter.Count("info")
			for range tt.reads {
				if id, _, _, err = n.readIdentity(context.Background(), false); err != nil {
					break
				}
			}
			got = counter.Count("info") - before
			n.syncMu.Unlock()
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
func assertIdentityFields(t *testing.T, c *redis.Client, id ServerIdentity) {
	t.Helper()
	ctx := context.Background()
	server, repl := c.Info(ctx, "server").Val(), c.Info(ctx, "replication").Val()
	if want := InfoField(server, "run_id"); id.RunID != want || want == "" {
		t.Errorf("run_id %q, want %q", id.RunID, want)
	}
	if want := InfoField(repl, "role"); id.Role != want || want == "" {
		t.Errorf("role %q, want %q", id.Role, want)
	}
	if want := strings.SplitN(InfoField(server, "redis_version"), ".", 2)[0]; want == "" || id.Major < 7 {
		t.Errorf("major %d, redis_version %q", id.Major, InfoField(server, "redis_version"))
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
	c := srv.Client(t)
	if err := c.Set(context.Background(), "jobs:1", "token", 0).Err(); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, c, testNodeOptions(nodeTestNamespaces, nil))
	c.AddHook(olderServerInfo{})
	n.syncMu.Lock() // as the feed loop reads it
	id, _, _, err := n.readIdentity(context.Background(), false)
	n.syncMu.Unlock()
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
	c := srv.Client(t)
	counter := redishook.NewCommandCounter()
	c.AddHook(counter)
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
	o := testNodeOptions(nodeTestNamespaces, backstopByHand)
	var n *Node
	tests := []struct {
		name string
		run  func()
	}{
		{"build", func() { n = startNode(t, c, o) }},
		{"re-read of written keys", func() { write(locks); reread(t, n, counter, locks, 2*locks) }},
		{"backstop walk", func() { n.backstop(ctx) }},
	}
	for _, tt := range tests {
		before := map[string]int{"pttl": counter.Count("pttl"), "pexpiretime": counter.Count("pexpiretime")}
		tt.run()
		if !n.Inspect().ExpireTime {
			t.Skip("the test needs Redis 7 or later")
		}
		if got := counter.Count("pttl") - before["pttl"]; got != 0 {
			t.Errorf("%s: %d PTTL commands, want 0", tt.name, got)
		}
		if got := counter.Count("pexpiretime") - before["pexpiretime"]; got < locks {
			t.Errorf("%s: %d PEXPIRETIME commands, want at least %d", tt.name, got, locks)
		}
	}
	matchesWalk(t, n, c, o, "the re-reads and the backstop walk")
}

// reread re-reads the keys jobs:from to jobs:to-1 into n's index, as a drain does when the feed
// names them (syncMu held: no drain runs meanwhile), and checks that the commands of the re-read
// read no TIME: the index keeps expiry times, not TTLs.
func reread(t *testing.T, n *Node, counter *redishook.CommandCounter, from, to int) {
	t.Helper()
	var keys []string
	for i := from; i < to; i++ {
		keys = append(keys, fmt.Sprintf("jobs:%d", i))
	}
	n.syncMu.Lock()
	before := counter.Count("time")
	err := n.reread(context.Background(), n.idx, keys)
	times := counter.Count("time") - before
	n.syncMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if times != 0 {
		t.Errorf("re-read of %d keys: %d TIME commands, want 0", len(keys), times)
	}
}
