package keyspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func startNotifying(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	return srv, srv.Client(t)
}

func subscribe(t *testing.T, opts *redis.Options, prefixes ...string) *Subscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Subscribe(ctx, opts, prefixes, 0)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func syncEvents(t *testing.T, s *Subscriber) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	events, err := s.Sync(ctx)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return events
}

// TestSubscriberDeliversEventsInOrder: every event of a key arrives, in the order Redis applied
// them, however close together (one MULTI), and Sync returns only after all of them.
func TestSubscriberDeliversEventsInOrder(t *testing.T) {
	srv, c := startNotifying(t)
	s := subscribe(t, &redis.Options{Addr: srv.Addr}, "jobs:")
	ctx := context.Background()
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "jobs:1", "a", 0)
		p.Del(ctx, "jobs:1")
		p.Set(ctx, "jobs:1", "b", time.Minute)
		p.Set(ctx, "other:1", "x", 0) // not under the prefix
		p.HSet(ctx, "jobs:2", "holder", "1")
		p.PExpire(ctx, "jobs:2", time.Minute)
		p.Rename(ctx, "jobs:2", "jobs:3")
		p.PExpire(ctx, "jobs:3", -time.Millisecond) // in the past: deleted, published as del
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{"jobs:1", "set"}, {"jobs:1", "del"}, {"jobs:1", "set"}, {"jobs:1", "expire"},
		{"jobs:2", "hset"}, {"jobs:2", "expire"}, {"jobs:2", "rename_from"}, {"jobs:3", "rename_to"},
		{"jobs:3", "del"},
	}
	if got := syncEvents(t, s); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	if got := syncEvents(t, s); len(got) != 0 {
		t.Fatalf("a second Sync returned %v, want nothing", got)
	}
}

// TestSubscriberPatternIsLiteral: a prefix with glob characters matches only itself.
func TestSubscriberPatternIsLiteral(t *testing.T) {
	srv, c := startNotifying(t)
	s := subscribe(t, &redis.Options{Addr: srv.Addr}, "a*[b]:")
	ctx := context.Background()
	for _, k := range []string{"axb:1", "a*b:1", "a*[b]:1", "ab:1"} {
		c.Set(ctx, k, "v", 0)
	}
	want := []Event{{"a*[b]:1", "set"}}
	if got := syncEvents(t, s); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if got, want := Pattern(3, `a*?[]\:`), `__keyspace@3__:a\*\?\[\]\\:*`; got != want {
		t.Fatalf("Pattern = %q, want %q", got, want)
	}
}

// TestSubscriberOnlyItsDatabase: the events of another database are not the subscriber's.
func TestSubscriberOnlyItsDatabase(t *testing.T) {
	srv, _ := startNotifying(t)
	s := subscribe(t, &redis.Options{Addr: srv.Addr, DB: 2}, "jobs:")
	ctx := context.Background()
	for db := range 3 {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
		c.Set(ctx, fmt.Sprintf("jobs:%d", db), "v", 0)
		c.Close()
	}
	want := []Event{{"jobs:2", "set"}}
	if got := syncEvents(t, s); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestSubscriberLostWhenKilled: a killed subscription is lost for good (pub/sub messages sent
// meanwhile are gone), even though go-redis would subscribe again on a new connection.
func TestSubscriberLostWhenKilled(t *testing.T) {
	srv, c := startNotifying(t)
	s := subscribe(t, &redis.Options{Addr: srv.Addr}, "jobs:")
	ctx := context.Background()
	syncEvents(t, s)
	if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "jobs:1", "v", 0)
	for range 3 { // the kill may be read at the first or second round trip; never forgotten
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.Sync(sctx)
		cancel()
		if errors.Is(err, ErrLost) {
			return
		}
		if err != nil {
			t.Fatalf("Sync after CLIENT KILL: %v, want ErrLost", err)
		}
	}
	t.Fatal("Sync after CLIENT KILL: no ErrLost in 3 round trips")
}

// TestSubscriberLostPastMaxPending: events beyond the bound are a loss, not memory.
func TestSubscriberLostPastMaxPending(t *testing.T) {
	srv, c := startNotifying(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Subscribe(ctx, &redis.Options{Addr: srv.Addr}, []string{"jobs:"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 11 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "v", 0)
	}
	if _, err := s.Sync(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("Sync after 11 events with a bound of 10: %v, want ErrLost", err)
	}
}

// TestSubscribeNeedsTheExactChannelRule: Redis grants a PSUBSCRIBE pattern only by a channel
// rule of the same text; Pattern's text is that rule.
func TestSubscribeNeedsTheExactChannelRule(t *testing.T) {
	srv, admin := startNotifying(t)
	ctx := context.Background()
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{rule: "&" + Pattern(0, "jobs:"), ok: true},
		{rule: "&__keyspace@0__:*"},
		{rule: "&__keyspace@0__:jobs:1"},
	} {
		if err := admin.Do(ctx, "ACL", "SETUSER", "feed", "reset", "on", ">pw", "+psubscribe", "+ping", tc.rule).Err(); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		s, err := Subscribe(sctx, &redis.Options{Addr: srv.Addr, Username: "feed", Password: "pw"}, []string{"jobs:"}, 0)
		cancel()
		switch {
		case tc.ok && err != nil:
			t.Errorf("rule %s: %v", tc.rule, err)
		case !tc.ok && !errors.Is(err, ErrSubscribeRefused):
			t.Errorf("rule %s: %v, want ErrSubscribeRefused", tc.rule, err)
		}
		if s != nil {
			s.Close()
		}
	}
}
