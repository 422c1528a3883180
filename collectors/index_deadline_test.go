package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestShortDeadlinesKeepTheChangeFeed: a scrape whose deadline passes while the index's PING is
// on the tracking connection must not close that connection. A read timeout on it drops
// tracking, and the node resyncs: a new feed and a walk of the whole keyspace, which any client
// sending a short X-Prometheus-Scrape-Timeout-Seconds could then trigger at will.
func TestShortDeadlinesKeepTheChangeFeed(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	for i := range 20 {
		c.Set(ctx, fmt.Sprintf("jobs:%d", i), "t", time.Minute)
	}
	s := indexed(t, c, []Namespace{{Name: "jobs", Pattern: "jobs:*"}})
	before := s.Scan(ctx).IndexResyncs[index.ResyncConnectionLost]
	for i := range 60 {
		// From already past to a few round trips: some end while the PING is in flight.
		short, cancel := context.WithTimeout(ctx, time.Duration(i%12)*100*time.Microsecond)
		s.Scan(short)
		cancel()
	}
	res := waitCurrent(t, s)
	if got := res.IndexResyncs[index.ResyncConnectionLost] - before; got != 0 {
		t.Fatalf("60 scrapes with short deadlines made the index resync %d times (connection_lost)", got)
	}
	compareNow(t, s, c, "after short scrapes")
}
