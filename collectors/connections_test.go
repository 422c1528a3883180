package collectors

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/testharness/redishook"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// inFlight is a go-redis hook that counts the scanner's SCAN calls and pipelines in flight and
// records the peak; it holds every pipeline for delay, so that a scan's concurrency builds up.
// Hooks run around connection checkout, so the peak bounds the connections the scan needed.
// Other commands are not counted: the connection handshake (HELLO) runs through the hooks too,
// nested inside the call that dialed, and would count one connection twice.
type inFlight struct {
	redishook.PassThrough
	delay time.Duration

	mu        sync.Mutex
	now, peak int
}

func (h *inFlight) enter() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now++
	h.peak = max(h.peak, h.now)
}

func (h *inFlight) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now--
}

func (h *inFlight) max() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

func (h *inFlight) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "scan" {
			return next(ctx, cmd)
		}
		h.enter()
		defer h.leave()
		return next(ctx, cmd)
	}
}
func (h *inFlight) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.enter()
		defer h.leave()
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		return next(ctx, cmds)
	}
}

// TestConnectionsPerNode ties ConnectionsPerNode to what a scan really does: with slow
// pipelines every worker is busy at once, the scan never has more calls in flight on the node
// than ConnectionsPerNode says, and that does not grow with the number of namespaces.
func TestConnectionsPerNode(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv.Addr)
	for _, namespaces := range []int{1, 12} {
		t.Run(fmt.Sprintf("%d namespaces", namespaces), func(t *testing.T) {
			seed := newSeeder(t, c)
			opts := Options{BatchSize: 10}
			for i := range namespaces {
				name := fmt.Sprintf("ns%02d", i)
				opts.Namespaces = append(opts.Namespaces, Namespace{Name: name, Pattern: name + ":*"})
				// Six batches: more than the workers plus the channel hold, so SCAN runs on
				// while the workers are busy.
				for k := range 60 {
					seed.key(t, fmt.Sprintf("%s:%d", name, k), time.Minute, 0)
				}
			}
			hook := &inFlight{delay: 100 * time.Millisecond}
			counted := client(t, srv.Addr)
			counted.AddHook(hook)
			res := scanWithin(t, newTestScanner(t, counted, opts), 10*time.Second)
			if !res.Up {
				t.Fatalf("scan failed: %v", res.Err)
			}
			for _, ns := range res.Namespaces {
				if !ns.Complete || ns.Keys != 60 {
					t.Errorf("%s: complete=%v keys=%d, want complete with 60", ns.Namespace.Name, ns.Complete, ns.Keys)
				}
			}
			bound := ConnectionsPerNode()
			// The lower check shows the test built up the concurrency it is about; the upper
			// one, that one walk holds at most its SCAN loop and its workers.
			if peak := hook.max(); peak > 1+walk.InspectWorkers || peak < walk.InspectWorkers || peak > bound {
				t.Errorf("peak calls in flight %d, want between %d (every worker busy) and %d (ConnectionsPerNode = %d)",
					peak, walk.InspectWorkers, 1+walk.InspectWorkers, bound)
			}
		})
	}
}
