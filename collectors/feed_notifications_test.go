package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/keyspace"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// eventLog collects what Options.onEvents receives, per key in the order received.
type eventLog struct {
	mu     sync.Mutex
	byKey  map[string][]string
	masks  map[string]uint64
	calls  int
	lastAt int64
}

func newEventLog() *eventLog {
	return &eventLog{byKey: map[string][]string{}, masks: map[string]uint64{}}
}

func (l *eventLog) hook(key string, mask uint64, events []string, at int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byKey[key] = append(l.byKey[key], events...)
	l.masks[key] = mask
	l.calls++
	l.lastAt = at
}

func (l *eventLog) of(key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byKey[key])
}

// indexedFeed starts a Scanner in ModeAuto with the given feed and waits for its index.
func indexedFeed(t *testing.T, c redis.UniversalClient, namespaces []Namespace, feed FeedSource, events *eventLog) *Scanner {
	t.Helper()
	opts := Options{recordHoldAgesOnly: true, Namespaces: namespaces, Mode: ModeAuto, Feed: feed}
	if events != nil {
		opts.onEvents = events.hook
	}
	s, err := NewScanner(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)
	return s
}

func setNotifications(t *testing.T, c redis.Cmdable, value string) {
	t.Helper()
	if err := c.ConfigSet(context.Background(), "notify-keyspace-events", value).Err(); err != nil {
		t.Fatalf("CONFIG SET notify-keyspace-events %q: %v", value, err)
	}
}

func sourceName(notifications bool) string {
	if notifications {
		return "notifications"
	}
	return "tracking"
}

// TestFeedAutoChoosesBySetting: auto follows notifications where the setting publishes every
// event the index needs, tracking where it does not (off, or the common "Ex"), and either way
// the index equals a fresh walk after changes.
func TestFeedAutoChoosesBySetting(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		setting       string
		notifications bool
	}{
		{"KEg$hx", true},
		{"KEA", true},
		{"", false},
		{"Ex", false},
		{"Kg$h", false}, // no expirations
	} {
		t.Run(fmt.Sprintf("%q", tc.setting), func(t *testing.T) {
			srv := redistest.Start(t)
			c := srv.Client(t)
			setNotifications(t, c, tc.setting)
			c.Set(ctx, "jobs:before", "t", time.Minute)
			s := indexedFeed(t, c, indexNamespaces, FeedAuto, nil)
			if got, _ := feedOf(nodeOf(s)); got != tc.notifications {
				t.Fatalf("setting %q: follows %s, want %s", tc.setting, sourceName(got), sourceName(tc.notifications))
			}
			c.Set(ctx, "jobs:after", "t", time.Minute)
			c.HSet(ctx, "h:1", "holder", "1")
			c.Del(ctx, "jobs:before")
			compareNow(t, s, c, "changes")
		})
	}
}

// feedACL gives user "feed" the documented ACL less +client|tracking, plus what the notifications
// feed needs as docs/exporter.md states it (+psubscribe and one channel rule per prefix): a
// managed Redis that refuses CLIENT TRACKING and CONFIG, where the operator turned notifications
// on by a parameter group.
// feedUserClient is a client of srv logged in as the user feedACL made.
func feedUserClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "feed", Password: "pw"})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func feedACL(t *testing.T, admin *redis.Client, prefixes []string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", "feed", "reset"}
	for _, r := range testkit.DocumentedACL(t, "pw") {
		if r != "+client|tracking" {
			args = append(args, r)
		}
	}
	args = append(args, "+psubscribe")
	for _, r := range keyspace.ChannelRules(0, prefixes) {
		args = append(args, r)
	}
	if err := admin.Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestFeedNotificationsTrustedWhereConfigRefused: with CONFIG GET and CLIENT TRACKING refused,
// --scan.feed=notifications subscribes anyway and the index stays exact; auto, which cannot see
// the setting, tries tracking, is refused, and walks.
func TestFeedNotificationsTrustedWhereConfigRefused(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	admin := srv.Client(t)
	prefixes, _ := index.TrackingPrefixes(patternsOf(indexNamespaces[:4]))
	feedACL(t, admin, prefixes)
	c := feedUserClient(t, srv)
	admin.Set(ctx, "jobs:1", "t", time.Minute)

	s := indexedFeed(t, c, indexNamespaces[:4], FeedNotifications, nil)
	if notifications, _ := feedOf(nodeOf(s)); !notifications {
		t.Fatal("--scan.feed=notifications with CONFIG refused: not following notifications")
	}
	admin.Set(ctx, "jobs:2", "t", time.Minute)
	admin.HSet(ctx, "h:1", "f", "v")
	admin.PExpire(ctx, "jobs:1", -time.Millisecond)
	compareNow(t, s, admin, "changes as the feed user")

	auto, err := NewScanner(c, Options{recordHoldAgesOnly: true, Namespaces: indexNamespaces[:4], Mode: ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer auto.Close()
	res := auto.Scan(ctx)
	for deadline := time.Now().Add(20 * time.Second); res.Namespaces[0].ModeReason != reasonTrackingRefused; res = auto.Scan(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("auto without CONFIG and tracking: %v, want the walk for %s", modes(res), reasonTrackingRefused)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func patternsOf(namespaces []Namespace) []string {
	var out []string
	for _, ns := range namespaces {
		out = append(out, ns.Pattern)
	}
	return out
}

// TestFeedNotificationsExactUnderChurn changes lock keys of both types at random beside
// unrelated keys of every type, under prefixes and outside them, and checks after each round
// that the index (followed by notifications, never resynced) equals a fresh walk.
func TestFeedNotificationsExactUnderChurn(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	c := srv.Client(t)
	s := indexedFeed(t, c, indexNamespaces, FeedNotifications, nil)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 39))
	for round := range 20 {
		for range 50 {
			churnOnce(ctx, c, rng)
		}
		time.Sleep(60 * time.Millisecond) // the 20-50 ms TTLs have passed: nothing expires mid-check
		compareNow(t, s, c, fmt.Sprintf("round %d", round))
	}
	res := waitCurrent(t, s)
	if notifications, _ := feedOf(nodeOf(s)); !notifications || len(nonZero(res.IndexResyncs)) != 0 || res.IndexCorrections != 0 {
		t.Fatalf("after churn: follows %s, resyncs %v, corrections %d; want notifications, none, 0",
			sourceName(notifications), nonZero(res.IndexResyncs), res.IndexCorrections)
	}
}

func nonZero(m map[string]int64) map[string]int64 {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(_ string, v int64) bool { return v == 0 })
	return out
}

// churnOnce runs one random change: to a lock key (string or hash, its fence or holder key) or
// to an unrelated key of any type.
func churnOnce(ctx context.Context, c *redis.Client, rng *rand.Rand) {
	k := fmt.Sprintf("jobs:%d", rng.IntN(40))
	h := fmt.Sprintf("h:%d", rng.IntN(20))
	switch rng.IntN(14) {
	case 0:
		c.Set(ctx, k, "t", time.Duration(1+rng.IntN(60))*time.Minute)
	case 1:
		c.Del(ctx, k)
	case 2:
		c.PExpire(ctx, k, time.Duration(20+rng.IntN(30))*time.Millisecond) // expires before the check
	case 3:
		c.Persist(ctx, k)
	case 4:
		c.Rename(ctx, k, fmt.Sprintf("jobs:deploy:%d", rng.IntN(10)))
	case 5:
		c.HSet(ctx, h, "holder", rng.IntN(3))
		c.Expire(ctx, h, time.Minute)
	case 6:
		c.HIncrBy(ctx, h, "holder", 1)
	case 7:
		c.PExpire(ctx, k, -time.Millisecond) // in the past: deleted, published as del
	case 8:
		c.Set(ctx, fmt.Sprintf("{%s}:fence", k), rng.IntN(9), 0)
	case 9:
		c.Set(ctx, fmt.Sprintf("{%s}:holder", k), "1 100", time.Minute)
	case 10:
		c.TxPipelined(ctx, func(p redis.Pipeliner) error { // a handoff inside one MULTI
			p.Del(ctx, k)
			p.Set(ctx, k, "t2", time.Minute)
			return nil
		})
	default:
		unrelatedWrite(ctx, c, rng)
	}
}

func unrelatedWrite(ctx context.Context, c *redis.Client, rng *rand.Rand) {
	n := rng.IntN(30)
	switch rng.IntN(6) {
	case 0:
		c.LPush(ctx, fmt.Sprintf("queue:%d", n), "x")
	case 1:
		c.SAdd(ctx, fmt.Sprintf("set:%d", n), rng.IntN(100))
	case 2:
		c.ZAdd(ctx, fmt.Sprintf("jobs:z:%d", n), redis.Z{Score: 1, Member: "m"}) // a zset under the prefix
	case 3:
		c.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("stream:%d", n), Values: []any{"a", "1"}})
	case 4:
		c.HSet(ctx, fmt.Sprintf("user:%d", n), "name", "x")
	default:
		c.Set(ctx, fmt.Sprintf("cache:%d", n), "x", time.Minute)
	}
}

// TestFeedNotificationsEventsInOrder: a key set, deleted and set again in one MULTI reaches the
// events hook as set, del, set, in that order (a SET with an expiry publishes "set" then
// "expire"), while client tracking names the key once.
func TestFeedNotificationsEventsInOrder(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	c := srv.Client(t)
	log := newEventLog()
	s := indexedFeed(t, c, indexNamespaces, FeedNotifications, log)

	tracking, err := index.OpenChangeFeed(ctx, c.Options(), []string{"jobs:"}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	defer tracking.Close()

	multi := func() {
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "jobs:1", "a", time.Minute)
			p.Del(ctx, "jobs:1")
			p.Set(ctx, "jobs:1", "b", time.Minute)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	multi()
	c.Set(ctx, "{jobs:1}:fence", "1", 0) // a companion: re-read, not handed over
	c.HSet(ctx, "h:1", "holder", "1")
	c.HIncrBy(ctx, "h:1", "count", 2)
	c.PExpire(ctx, "h:1", -time.Millisecond)
	compareNow(t, s, c, "MULTI")

	for key, want := range map[string][]string{
		"jobs:1":         {"set", "expire", "del", "set", "expire"},
		"h:1":            {"hset", "hincrby", "del"},
		"{jobs:1}:fence": nil,
	} {
		if got := log.of(key); !slices.Equal(got, want) {
			t.Errorf("events of %s: %v, want %v", key, got, want)
		}
	}
	// jobs:1 is a key of jobs and of held, the first and fifth indexed namespaces (suffix is walked).
	if got, want := log.masks["jobs:1"], uint64(1<<0|1<<4); got != want {
		t.Errorf("mask of jobs:1: %b, want %b", got, want)
	}

	if err := tracking.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ := tracking.Take(); !slices.Equal(slices.Collect(maps.Keys(changed)), []string{"jobs:1"}) {
		t.Fatalf("tracking before the MULTI: %v", changed)
	}
	multi()
	compareNow(t, s, c, "the second MULTI")
	if err := tracking.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	changed, _, _ := tracking.Take()
	keys := slices.Collect(maps.Keys(changed))
	second := log.of("jobs:1")[5:]
	t.Logf("the same MULTI: notifications hand over %v; tracking names %v", second, keys)
	if want := []string{"set", "expire", "del", "set", "expire"}; !slices.Equal(second, want) {
		t.Errorf("events of the second MULTI: %v, want %v", second, want)
	}
	if !slices.Equal(keys, []string{"jobs:1"}) {
		t.Fatalf("tracking named %v for the MULTI, want jobs:1 once", keys)
	}
}

// TestFeedNotificationsRefusedNamesTheRules: an ACL without the channel rules refuses the
// subscription; the namespaces are walked, and the log line names the exact rules to add.
func TestFeedNotificationsRefusedNamesTheRules(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	admin := srv.Client(t)
	feedACL(t, admin, []string{"elsewhere:"})
	c := feedUserClient(t, srv)
	var logs testkit.SyncBuffer
	s, err := NewScanner(c, Options{recordHoldAgesOnly: true, Namespaces: indexNamespaces[:1], Mode: ModeAuto, Feed: FeedNotifications,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := s.Scan(ctx)
	for deadline := time.Now().Add(20 * time.Second); res.Namespaces[0].ModeReason != reasonTrackingRefused; res = s.Scan(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("subscription refused: %v, want the walk for %s", modes(res), reasonTrackingRefused)
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := `+psubscribe +ping &__keyspace@0__:jobs:* &__keyspace@0__:{jobs:*`
	if !strings.Contains(logs.String(), want) {
		t.Fatalf("log does not name the rules %q:\n%s", want, logs.String())
	}
}
