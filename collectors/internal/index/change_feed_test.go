package index

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestChangeFeedBesideTheFirstDial opens change feeds with the options of a caller's client.
// go-redis writes the client's maintenance-notification settings, under a lock of its own, when
// Redis (before 8) refuses their handshake on a new connection, as a cluster master's index does
// while a scrape's slot-map reload dials that master. The feed must not read those settings:
// that read is a data race, which only the race detector sees (the loop beside a first dial is
// for -race). What any build sees is the consequence: the feed runs on settings of its own,
// notifications disabled, so it opens on such a Redis even when the caller's client demands
// notifications (a client that reads its settings fails its handshake there).
func TestChangeFeedBesideTheFirstDial(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		mode   maintnotifications.Mode
		rounds int
	}{
		{"auto, beside the client's first dial", maintnotifications.ModeAuto, 20},
		{"enabled by the caller", maintnotifications.ModeEnabled, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range tt.rounds {
				c := redis.NewClient(&redis.Options{Addr: srv.Addr,
					MaintNotificationsConfig: &maintnotifications.Config{Mode: tt.mode}})
				var wg sync.WaitGroup
				wg.Go(func() { c.Ping(ctx) })
				feed, err := OpenChangeFeed(ctx, c.Options(), []string{"jobs:"}, func(string) bool { return true })
				wg.Wait()
				c.Close()
				if err != nil {
					t.Fatalf("open the feed: %v", err)
				}
				mode := feed.client.Options().MaintNotificationsConfig.Mode
				feed.Close()
				if mode != maintnotifications.ModeDisabled {
					t.Fatalf("feed's maintenance notifications %q, want its own %q", mode, maintnotifications.ModeDisabled)
				}
			}
		})
	}
}

// TestChangeFeedStampsBeforeTheChange: a key's naming carries an instant before its change, by
// the server's clock, each round trip moves the instant up to which every change is named
// (the sweep's bound) forward, never past the round trip's own TIME, and the keys taken carry
// an instant by which they had changed, never before the write (a hold's beginning).
func TestChangeFeedStampsBeforeTheChange(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	feed, err := OpenChangeFeed(ctx, c.Options(), []string{"jobs:"}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(feed.Close)
	if got := feed.Complete(); got != 0 {
		t.Fatalf("complete before any round trip: %d, want 0 (not known)", got)
	}
	var last int64
	for round := range 5 {
		before := testkit.ServerNow(t, c)
		written := writeAt(t, c, fmt.Sprintf("jobs:%d", round))
		if err := feed.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		after := testkit.ServerNow(t, c)
		changed, by, _ := feed.Take()
		stamp, named := changed[fmt.Sprintf("jobs:%d", round)]
		complete := feed.Complete()
		switch {
		case !named:
			t.Fatalf("round %d: not named: %v", round, changed)
		case stamp > before:
			t.Errorf("round %d: stamped %d, after the change (made after %d)", round, stamp, before)
		case by < written || by > after:
			t.Errorf("round %d: changed by %d, want from the write's %d to %d", round, by, written, after)
		case complete > after || complete < last:
			t.Errorf("round %d: complete to %d, want from %d to %d", round, complete, last, after)
		case round > 0 && complete <= 0:
			t.Errorf("round %d: complete to %d after a round trip", round, complete)
		}
		last = complete
	}
}

// writeAt sets key and returns the server's TIME (ms) right after the write, from the same
// transaction.
func writeAt(t *testing.T, c *redis.Client, key string) int64 {
	t.Helper()
	var at *redis.TimeCmd
	if _, err := c.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
		p.Set(context.Background(), key, "v", 0)
		at = p.Time(context.Background())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return at.Val().UnixMilli()
}
