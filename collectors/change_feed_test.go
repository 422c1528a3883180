package collectors

import (
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
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
				feed, err := openChangeFeed(ctx, c.Options(), []string{"jobs:"}, func(string) bool { return true })
				wg.Wait()
				c.Close()
				if err != nil {
					t.Fatalf("open the feed: %v", err)
				}
				mode := feed.client.Options().MaintNotificationsConfig.Mode
				feed.close()
				if mode != maintnotifications.ModeDisabled {
					t.Fatalf("feed's maintenance notifications %q, want its own %q", mode, maintnotifications.ModeDisabled)
				}
			}
		})
	}
}
