package index

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterScrapeDoesNotWaitOutAStuckListing: a scrape that finds the masters being listed
// (the background listing every second, whose slot-map reload may wait up to a quarter of its
// own 5 s on a hung node) waits for that listing no longer than its own share of the slot-map
// reload, then serves the masters listed last. Waiting for the whole listing stacked the other
// listing's share on the scrape's: 1.25 s of a 2 s scrape, and on a loaded machine the scrape
// was down. Here the listing under way never ends (the test holds its lock): every scrape, with
// a Scanner's 2 s deadline, is up and exact all the same.
func TestClusterScrapeDoesNotWaitOutAStuckListing(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	cc := cluster.Client(t)
	ctx := context.Background()
	const n = 40
	for i := range n {
		if err := cc.Set(ctx, fmt.Sprintf("jobs:%d", i), "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	ci := startCluster(t, cc, testNodeOptions(nodeTestNamespaces[:1], nil))
	ci.refreshMu.Lock() // a listing under way, stuck
	defer ci.refreshMu.Unlock()
	for i := range 3 {
		scrape, cancel := context.WithTimeout(ctx, 2*time.Second)
		served := ci.Collect(scrape)
		cancel()
		if err := servedFromIndex(served); err != nil || served.Results[0].Keys != n {
			t.Errorf("scrape %d during a stuck listing: %v, %d keys, want %d from the index", i, err, served.Results[0].Keys, n)
		}
	}
}
