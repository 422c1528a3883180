package collectors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// manualJobs is the namespace jobs (jobs:*, strings) as read by hand: SCAN MATCH TYPE, then
// PTTL of each key, counting the keys alive and those without expiry.
func manualJobs(t *testing.T, c *redis.Client) (keys, noTTL int64) {
	t.Helper()
	ctx := context.Background()
	var cur uint64
	for {
		ks, next, err := c.ScanType(ctx, cur, "jobs:*", 100, "string").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			switch p := c.PTTL(ctx, k).Val(); {
			case p == -1: // go-redis: no expiry
				keys++
				noTTL++
			case p >= 0:
				keys++
			} // -2: gone
		}
		cur = next
		if cur == 0 {
			return
		}
	}
}

// Other clients of the same Redis do things to lock keys and to the server while the exporter
// serves from its index: COPY and MOVE of lock keys (also into other databases), the same names
// written in another database, a MULTI block, a hash under a lock's name, multi-megabyte values
// under a lock's and a holder's name, keyspace-notification and script/function flushes,
// CLIENT KILL TYPE normal (the feed's connection and the scan pool's), CLIENT PAUSE WRITE with
// keys expiring during the pause, an LFU policy with OBJECT FREQ, and SWAPDB with the same names
// in both databases. After each step the index's figures equal a fresh walk's, and the lock
// count and keys without expiry equal a SCAN + PTTL read by hand (also during the pause, when
// expired keys are not deleted yet).
func TestIndexUnderNeighbourCommands(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--enable-debug-command", "local"))
	c := srv.Client(t)
	nb := srv.Client(t)
	failed := &neighbourErrors{}
	nb.AddHook(failed)
	seed := newSeeder(t, c)
	for i := range 30 {
		seed.key(t, fmt.Sprintf("jobs:%d", i), time.Duration(10+i)*time.Second, i)
	}
	s := indexed(t, c, indexNamespaces)
	check := func(step string) {
		compareNow(t, s, c, step)
		res := s.Scan(ctx)
		k, n := manualJobs(t, c)
		j := res.Namespaces[0]
		if j.Keys != k || j.KeysWithoutTTL != n {
			t.Errorf("%s: index jobs keys=%d noTTL=%d, manual %d/%d", step, j.Keys, j.KeysWithoutTTL, k, n)
		}
		t.Logf("%s: keys=%d without TTL=%d, by hand %d/%d; resyncs %v", step, j.Keys, j.KeysWithoutTTL, k, n, res.IndexResyncs)
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"copy", func() { nb.Do(ctx, "COPY", "jobs:1", "jobs:copy:1"); nb.Do(ctx, "COPY", "jobs:2", "jobs:3", "REPLACE") }},
		{"move", func() { nb.Move(ctx, "jobs:4", 3); nb.Do(ctx, "COPY", "jobs:5", "jobs:5", "DB", 2) }},
		{"other-db-same-names", func() {
			o := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 2})
			defer o.Close()
			for i := range 10 {
				o.Set(ctx, fmt.Sprintf("jobs:%d", i), "x", 0)
				o.Del(ctx, fmt.Sprintf("jobs:%d", i))
				o.Set(ctx, fmt.Sprintf("jobs:%d", i), "x", time.Second)
			}
		}},
		{"multi", func() {
			nb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "jobs:m1", "t", time.Minute)
				p.Del(ctx, "jobs:6")
				p.Rename(ctx, "jobs:7", "jobs:m7")
				p.Persist(ctx, "jobs:8")
				return nil
			})
		}},
		{"hash-named-lock", func() {
			nb.Del(ctx, "jobs:9")
			nb.HSet(ctx, "jobs:9", "owner", "x")
			nb.Expire(ctx, "jobs:9", time.Minute)
		}},
		{"big-values", func() {
			big := strings.Repeat("v", 8<<20)
			nb.Set(ctx, "jobs:big", big, time.Minute)
			nb.Set(ctx, "{jobs:big}:holder", big, time.Minute)
			nb.Set(ctx, "{jobs:10}:holder", big, 0)
		}},
		{"notify-config", func() {
			nb.ConfigSet(ctx, "notify-keyspace-events", "KEA")
			nb.Set(ctx, "jobs:n1", "t", time.Minute)
			nb.ConfigSet(ctx, "notify-keyspace-events", "")
			nb.Set(ctx, "jobs:n2", "t", time.Minute)
		}},
		{"script-function-flush", func() { nb.ScriptFlush(ctx); nb.Do(ctx, "FUNCTION", "FLUSH") }},
		{"client-kill-normal", func() {
			nb.Do(ctx, "CLIENT", "KILL", "TYPE", "normal")
			nb.Set(ctx, "jobs:after-kill", "t", time.Minute)
		}},
		{"pause-write", func() {
			for i := range 5 {
				nb.Set(ctx, fmt.Sprintf("jobs:pw:%d", i), "t", 60*time.Millisecond)
			}
			nb.Do(ctx, "CLIENT", "PAUSE", 600, "WRITE")
			time.Sleep(200 * time.Millisecond)
			res := s.Scan(ctx)
			k, n := manualJobs(t, c)
			if !res.Up || res.Namespaces[0].Keys != k || res.Namespaces[0].KeysWithoutTTL != n {
				t.Errorf("during CLIENT PAUSE WRITE: up %v, keys %d (%d without TTL), by hand %d (%d)",
					res.Up, res.Namespaces[0].Keys, res.Namespaces[0].KeysWithoutTTL, k, n)
			}
			time.Sleep(500 * time.Millisecond)
		}},
		{"lfu-object-freq", func() {
			nb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lfu")
			nb.Do(ctx, "OBJECT", "FREQ", "jobs:11")
			nb.ConfigSet(ctx, "maxmemory-policy", "noeviction")
		}},
		{"swapdb-same-names", func() {
			o := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 1})
			defer o.Close()
			o.Set(ctx, "jobs:1", "other", time.Minute)
			o.Set(ctx, "jobs:only-in-1", "other", 0)
			nb.Do(ctx, "SWAPDB", 0, 1)
		}},
	}
	check("build")
	for _, st := range steps {
		st.do()
		if err := failed.take(); err != nil {
			t.Fatalf("%s: the neighbour's command failed: %v", st.name, err)
		}
		time.Sleep(50 * time.Millisecond)
		check(st.name)
	}
}

// neighbourErrors is a go-redis hook that keeps the first error (other than a nil reply) of a
// test's neighbour client, so that a step that did nothing is not taken for a step that passed.
type neighbourErrors struct {
	redishook.PassThrough
	mu    sync.Mutex
	first error
}

func (h *neighbourErrors) keep(cmd redis.Cmder) {
	err := cmd.Err()
	if args := cmd.Args(); len(args) > 1 && cmd.Name() == "client" {
		// go-redis's own connection handshake (CLIENT SETINFO, CLIENT MAINT_NOTIFICATIONS),
		// which Redis 7.0 does not know: not a command of the test's.
		if sub := strings.ToLower(fmt.Sprint(args[1])); sub == "setinfo" || sub == "maint_notifications" {
			return
		}
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		h.mu.Lock()
		if h.first == nil {
			h.first = err
		}
		h.mu.Unlock()
	}
}

func (h *neighbourErrors) take() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.first
	h.first = nil
	return err
}

func (h *neighbourErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.keep(cmd)
		return err
	}
}

func (h *neighbourErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.keep(c)
		}
		return err
	}
}
