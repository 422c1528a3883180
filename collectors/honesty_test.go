package collectors

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// seedMany writes n string keys "prefix:i" with an hour's TTL.
func seedMany(t *testing.T, c *redis.Client, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for from := 0; from < n; from += 10_000 {
		pipe := c.Pipeline()
		for i := from; i < min(n, from+10_000); i++ {
			pipe.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), "token", time.Hour)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeadlineOnHealthyRedisIsNotDown scrapes a healthy Redis holding 200k lock keys 50 times
// with a deadline shorter than the scan. Every scrape must say up 1, incomplete, with the keys
// counted so far. (The socket used to carry the same deadline and time out a moment before the
// context, which the scan took for a failing Redis: most such scrapes said up 0.)
func TestDeadlineOnHealthyRedisIsNotDown(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	const keys = 200_000
	seedMany(t, c, "big", keys)
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "big", Pattern: "big:*"}}, MaxKeys: keys, Timeout: 2 * time.Minute})

	// The deadline comes from a full scan measured here, so that it is shorter on any machine.
	full := scanWithin(t, s, time.Minute)
	if !full.Up || !full.Namespaces[0].Complete || full.Namespaces[0].Keys != keys {
		t.Fatalf("full scan: up=%v complete=%v keys=%d", full.Up, full.Namespaces[0].Complete, full.Namespaces[0].Keys)
	}
	// The deadline comes from the full scan measured here, so that it is shorter than the scan
	// on any machine and grows with the machine's load: a starved machine (load 12 on 2 cores
	// was seen to delay Redis's first answer past a fixed 1s) gets a proportionally longer one.
	// 2.5s at most keeps the 50 scrapes bounded. (Whether a server that answers nothing before
	// the deadline is paused or merely slow cannot be told: that is up 0, see TestRedisDown.)
	deadline := min(full.Namespaces[0].Duration/4, 2500*time.Millisecond)
	t.Logf("full scan %v, deadline %v", full.Namespaces[0].Duration, deadline)

	down, incomplete := 0, 0
	for i := range 50 {
		res := scanWithin(t, s, deadline)
		ns := res.Namespaces[0]
		if !res.Up {
			down++
			t.Errorf("scrape %d: up 0 on a healthy Redis: %v", i, res.Err)
			continue
		}
		if !ns.Complete {
			incomplete++
		}
		if ns.Keys > keys || ns.Err != nil {
			t.Errorf("scrape %d: keys=%d err=%v", i, ns.Keys, ns.Err)
		}
	}
	if incomplete == 0 {
		t.Errorf("no scrape was cut by the %v deadline: the test did not test deadlines", deadline)
	}
	t.Logf("%d of 50 scrapes down, %d incomplete", down, incomplete)
}

// TestShortDeadlineFloodCannotTruncate runs a loop of clients with a 0.6s deadline next to
// Prometheus-like scrapes with 10s: the latter must complete, and the flood must not multiply
// the work Redis does (one walk sends commands at a time).
func TestShortDeadlineFloodCannotTruncate(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	seedMany(t, c, "flood", 4000)
	// 80 pipelines of 50 keys, each held 50ms, on 3 workers: a walk takes over a second.
	c.AddHook(slowPipelines{delay: 50 * time.Millisecond})
	peak := &inFlight{}
	c.AddHook(peak)
	s := newTestScanner(t, c, Options{Namespaces: []Namespace{{Name: "flood", Pattern: "flood:*"}}, BatchSize: 50})

	stop := make(chan struct{})
	var flooders sync.WaitGroup
	var short atomic.Int64
	for range 4 {
		flooders.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				scanWithin(t, s, 600*time.Millisecond)
				short.Add(1)
			}
		})
	}
	for i := range 5 {
		time.Sleep(150 * time.Millisecond) // let the flood start walks of its own
		res := scanWithin(t, s, 10*time.Second)
		if ns := res.Namespaces[0]; !res.Up || !ns.Complete || ns.Keys != 4000 {
			t.Errorf("prometheus scrape %d: up=%v complete=%v keys=%d, want complete with 4000", i, res.Up, ns.Complete, ns.Keys)
		}
	}
	close(stop)
	flooders.Wait()
	if short.Load() < 8 {
		t.Errorf("only %d short requests ran: the test did not flood", short.Load())
	}
	if p := peak.max(); p > ConnectionsPerNode() {
		t.Errorf("%d Redis calls in flight at once, want at most ConnectionsPerNode() = %d", p, ConnectionsPerNode())
	}
}
