package collectors

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestIndexWithoutPingGrant: the documented ACL less +ping (which the docs call optional, for
// health checks by hand) gets a current index that follows the feed. The index's round trips on
// its tracking connection were PINGs: refused, every build was thrown away and retried with a
// backoff up to 30 s, while scrapes served the unfinished index as mode="index" with an age of
// 2^63 ns, and nothing was logged above DEBUG.
func TestIndexWithoutPingGrant(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	rules := slices.DeleteFunc(testkit.DocumentedACL(t, "pw"), func(r string) bool { return r == "+ping" })
	testkit.SetACL(t, srv, rules)
	if v, err := admin.Do(ctx, "ACL", "DRYRUN", testkit.ACLUser, "PING").Text(); err != nil || v == "OK" {
		t.Fatalf("ACL DRYRUN PING as the test user: %q %v, want a refusal", v, err)
	}
	writeKeys(t, admin, keyBatch{"jobs:%d", 5})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: testkit.ACLUser, Password: "pw"})
	defer c.Close()
	namespaces := indexNamespaces[:1]
	s := indexed(t, c, namespaces)
	writeKeys(t, admin, keyBatch{"jobs:fed:%d", 3}) // through the feed
	matchesFreshWalk(t, s, c, namespaces)
}

// trackingKiller kills, until stopped, every connection with client tracking on (the
// exporter's change feed) of the server behind admin as soon as it appears.
type trackingKiller struct {
	admin *redis.Client
	kills atomic.Int64
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func startTrackingKiller(t *testing.T, admin *redis.Client) *trackingKiller {
	k := &trackingKiller{admin: admin, done: make(chan struct{})}
	k.wg.Go(k.run)
	t.Cleanup(k.stop)
	return k
}

func (k *trackingKiller) run() {
	ctx := context.Background()
	for {
		select {
		case <-k.done:
			return
		case <-time.After(2 * time.Millisecond):
		}
		list, err := k.admin.ClientList(ctx).Result()
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(list, "\n") {
			id, flags := clientField(line, "id"), clientField(line, "flags")
			if strings.Contains(flags, "t") && k.admin.Do(ctx, "CLIENT", "KILL", "ID", id).Err() == nil {
				k.kills.Add(1)
			}
		}
	}
}

func (k *trackingKiller) stop() {
	k.once.Do(func() {
		close(k.done)
		k.wg.Wait()
	})
}

// clientField is the value of name=value in a CLIENT LIST line.
func clientField(line, name string) string {
	for f := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

// TestIndexThatCannotBuildSaysSo: while every build of the index fails (its change feed is
// killed under each), scrapes walk with the reason index_unavailable, never serve the
// unfinished index, and one line at WARN says why, however many builds fail; once a build
// succeeds the index serves. The index of a failed first build was served as mode="index" with
// an age of 2^63 ns, and the failures were logged at DEBUG only.
func TestIndexThatCannotBuildSaysSo(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--enable-debug-command", "yes"))
	admin := srv.Client(t)
	// Other keys, so that a build's walk outlasts the killer's look at CLIENT LIST.
	if err := admin.Do(ctx, "DEBUG", "POPULATE", 200_000, "other", 8).Err(); err != nil {
		t.Fatal(err)
	}
	writeKeys(t, admin, keyBatch{"jobs:%d", 5})
	killer := startTrackingKiller(t, admin)
	log := &lineLog{}
	s, err := NewScanner(client(t, srv.Addr), Options{Namespaces: indexNamespaces[:1], Mode: ModeAuto, Logger: slog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	// Three builds killed: the first, and two retried after the backoff (1 s, then 2 s).
	for scrape := 1; killer.kills.Load() < 3 || log.count(index.BuildFailedMessage) == 0; scrape++ {
		res := s.Scan(ctx)
		ns := res.Namespaces[0]
		switch {
		case !res.Up || ns.Keys != 5:
			t.Fatalf("scrape %d: up %v (%v), %d keys, want 5: %v", scrape, res.Up, res.Err, ns.Keys, modes(res))
		case ns.Mode == modeIndex && ns.IndexAge > time.Since(start):
			t.Fatalf("scrape %d: served an index as of %v ago, the exporter started %v ago", scrape, ns.IndexAge, time.Since(start))
		case ns.Mode == modeWalk && ns.ModeReason != reasonIndexUnavailable:
			t.Fatalf("scrape %d: walked for %q, want %q", scrape, ns.ModeReason, reasonIndexUnavailable)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("after a minute: %d builds killed, lines %q", killer.kills.Load(), log.lines)
		}
		time.Sleep(100 * time.Millisecond)
	}
	killer.stop()
	res := waitCurrent(t, s)
	// One line per run of failed builds: a build the killer missed (followed, then killed: a
	// connection_lost resync) starts a new run.
	runs := 1 + int(res.IndexResyncs[index.ResyncConnectionLost])
	if got := log.count(index.BuildFailedMessage); got < 1 || got > runs {
		t.Errorf("%d builds killed in %d run(s): %d %q lines, want 1 per run: %q", killer.kills.Load(), runs, got, index.BuildFailedMessage, log.lines)
	}
}
