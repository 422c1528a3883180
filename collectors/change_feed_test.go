package collectors

import (
	"context"
	"sync"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestChangeFeedBesideTheFirstDial opens a change feed with the options of a client that is
// dialling its first connection at the same moment, as a cluster master's index does while a
// scrape's slot-map reload dials that master: go-redis turns its maintenance notifications off
// in the client's options when Redis (before 8) refuses their handshake, and the feed used to
// copy that part of the options unguarded (a data race under -race, found by make test in
// TestLeastPrivilegeACL).
func TestChangeFeedBesideTheFirstDial(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for range 20 {
		c := srv.Client(t)
		var wg sync.WaitGroup
		wg.Go(func() { c.Ping(ctx) })
		feed, err := openChangeFeed(ctx, c.Options(), []string{"jobs:"}, func(string) bool { return true })
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		feed.close()
	}
}
