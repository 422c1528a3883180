package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// awaitResync scrapes until reason was counted and the index is current again.
func awaitResync(t *testing.T, s *Scanner, reason string) *Result {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := s.Scan(ctx)
		if res.IndexResyncs[reason] > 0 && res.Up && indexCurrent(s, res) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s resync: %v %+v", reason, nonZero(res.IndexResyncs), modes(res))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFeedNotificationsResyncs: what a notifications feed cannot follow (a lost subscription,
// flushes and SWAPDB, which publish no keyspace event) resyncs the index, after which it equals a
// fresh walk again and follows notifications.
func TestFeedNotificationsResyncs(t *testing.T) {
	ctx := context.Background()
	other := func(srv *redistest.Server, db int) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
	}
	for _, tc := range []resyncCase{
		{"subscription killed", index.ResyncConnectionLost, func(t *testing.T, _ *redistest.Server, c *redis.Client, _ *Scanner) {
			if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
				t.Fatal(err)
			}
			c.Set(ctx, "jobs:after-kill", "t", time.Minute)
		}},
		{"FLUSHALL", index.ResyncFlush, func(t *testing.T, _ *redistest.Server, c *redis.Client, _ *Scanner) {
			if err := c.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			c.Set(ctx, "jobs:after-flush", "t", time.Minute)
		}},
		{"FLUSHDB", index.ResyncFlush, func(t *testing.T, _ *redistest.Server, c *redis.Client, _ *Scanner) {
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"SWAPDB", index.ResyncSwapDB, func(t *testing.T, srv *redistest.Server, c *redis.Client, _ *Scanner) {
			db1 := other(srv, 1)
			defer db1.Close()
			for i := range 7 {
				db1.Set(ctx, fmt.Sprintf("jobs:db1:%d", i), "t", 0)
			}
			if err := c.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
			c := srv.Client(t)
			for i := range 20 {
				c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Duration(i+10)*time.Second)
			}
			s := indexedFeed(t, c, indexNamespaces, FeedNotifications, nil)
			compareNow(t, s, c, "build")
			tc.act(t, srv, c, s)
			awaitResync(t, s, tc.reason)
			compareNow(t, s, c, tc.name)
			if notifications, _ := feedOf(nodeOf(s)); !notifications {
				t.Errorf("after the %s resync: follows tracking, want notifications", tc.name)
			}
		})
	}
}

// TestFeedNotificationsSwitchedOffIsNoticed: notifications switched off at run time publish
// nothing, so nothing in the feed tells; the setting, re-read every second, does. The index
// resyncs (notifications_off), stops following meanwhile, and then: auto follows tracking,
// exact again; notifications (demanded) is walked until they are switched back on.
func TestFeedNotificationsSwitchedOffIsNoticed(t *testing.T) {
	ctx := context.Background()
	for _, feed := range []FeedSource{FeedAuto, FeedNotifications} {
		t.Run(string(feed), func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
			c := srv.Client(t)
			c.Set(ctx, "jobs:1", "t", time.Minute)
			s := indexedFeed(t, c, indexNamespaces, feed, nil)
			setNotifications(t, c, "")
			c.Set(ctx, "jobs:unannounced", "t", time.Minute) // no event: only the re-read setting tells
			if feed == FeedAuto {
				awaitResync(t, s, index.ResyncNotificationsOff)
				compareNow(t, s, c, "notifications off")
				if notifications, following := feedOf(nodeOf(s)); notifications || !following {
					t.Fatalf("auto after notifications_off: follows %s, following %v; want tracking, true", sourceName(notifications), following)
				}
				return
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				res := s.Scan(ctx)
				if res.IndexResyncs[index.ResyncNotificationsOff] > 0 && res.Namespaces[0].ModeReason == reasonIndexUnavailable {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("notifications off under --scan.feed=notifications: %v %v, want a resync and the walk", nonZero(res.IndexResyncs), modes(res))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, following := feedOf(nodeOf(s)); following {
				t.Fatal("following() true while the demanded notifications are off")
			}
			if got := freshWalk(t, c, indexNamespaces).Namespaces[0].Keys; got != 2 {
				t.Fatalf("walk: %d jobs keys, want 2", got)
			}
			setNotifications(t, c, "Kg$hx")
			compareNow(t, s, c, "notifications back on") // the build's retry, within its backoff
			if notifications, _ := feedOf(nodeOf(s)); !notifications {
				t.Fatal("notifications back on: not following them")
			}
		})
	}
}

// TestFeedNotificationsSilenceCountedWhereConfigRefused: where CONFIG GET is refused the
// setting cannot be re-read. Notifications switched off by a CONFIG SET are noticed by its count
// in INFO commandstats, even when they are back on before anything could re-read them: a resync
// (notifications_off). Switched off where that count cannot tell, the backstop walk's
// corrections tell (TestIndexBackstopJudgesTheFeed).
func TestFeedNotificationsSilenceCountedWhereConfigRefused(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithArgs("--notify-keyspace-events", "KEA"))
	admin := srv.Client(t)
	prefixes, _ := index.TrackingPrefixes(patternsOf(indexNamespaces[:4]))
	feedACL(t, admin, prefixes)
	c := feedUserClient(t, srv)
	admin.Set(ctx, "jobs:1", "t", time.Minute)
	s, err := NewScanner(c, Options{recordHoldAgesOnly: true, Namespaces: indexNamespaces[:4], Mode: ModeAuto, Feed: FeedNotifications, BackstopKeysPerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	waitCurrent(t, s)

	setNotifications(t, admin, "")
	admin.Set(ctx, "jobs:unannounced", "t", time.Minute)
	setNotifications(t, admin, "KEA") // back on before any re-read of the setting could tell
	awaitResync(t, s, index.ResyncNotificationsOff)
	compareNow(t, s, admin, "CONFIG SET counted")
}
