package collectors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The lease library keeps counter keys next to locks and data: lease.FenceKey gives
// "{lock}:fence" (or "lock:fence" when the lock key has its own hash tag), lease.WriteFenceKey
// the same with ":writefence". A namespace pattern such as "{jobs}:*" would otherwise count
// those counters, which never expire, as locks without TTL.
const (
	fenceSuffix      = ":fence"
	writeFenceSuffix = ":writefence"
)

// lfuIdleError is the start of the error Redis returns for OBJECT IDLETIME when the
// maxmemory-policy is an LFU policy (idle time is not tracked then).
const lfuIdleError = "ERR An LFU maxmemory policy is selected"

// nodeClient is what a scan needs from a connection to one Redis node (or one logical node,
// such as a Sentinel-managed master).
type nodeClient interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Pipeline() redis.Pipeliner
}

// scanNode scans every namespace on one node, the namespaces concurrently so that one large
// namespace cannot starve the others of the scrape's time budget.
func (f *flight) scanNode(ctx context.Context, c nodeClient) {
	n := f.startNode()
	// noIdle is per node: the maxmemory-policy is a per-server setting.
	var noIdle atomic.Bool
	var wg sync.WaitGroup
	for i := range f.opts.Namespaces {
		wg.Go(func() { f.scanNamespace(ctx, c, n, &noIdle, i) })
	}
	wg.Wait()
}

// inspectWorkers is how many PTTL/OBJECT IDLETIME pipelines of one namespace are in flight on a
// node at once, each on its own connection. While one pipeline's replies are decoded here, Redis
// executes another's commands and the next SCAN, so neither side waits for the other. Three
// kept Redis busier than two (scans 1.15-1.26x faster in BenchmarkScrape on 2 CPUs); beyond
// that, a single-threaded Redis gains nothing from more connections.
const inspectWorkers = 3

// scanNamespace walks namespace i on one node: the SCAN loop hands batches to inspectWorkers
// pipelines. The namespace is done on this node when SCAN came back to cursor 0 (or the key
// cap stopped it) and every batch was inspected without error.
func (f *flight) scanNamespace(ctx context.Context, c nodeClient, n *node, noIdle *atomic.Bool, i int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []string, inspectWorkers)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range inspectWorkers {
		wg.Go(func() {
			in := &inspector{c: c, noIdle: noIdle}
			for batch := range batches {
				if failed.Load() {
					continue // drain: the producer stops at its next send
				}
				live, idleKnown, err := in.inspect(ctx, batch)
				if err != nil {
					f.fail(ctx, i, err)
					failed.Store(true)
					cancel()
					continue
				}
				if !idleKnown {
					f.idleUnavailable()
				}
				f.merge(i, live, idleKnown)
			}
		})
	}
	finished := f.produceBatches(ctx, c, n, i, batches)
	close(batches)
	wg.Wait()
	if finished && !failed.Load() {
		f.nsDone(i, time.Now())
	}
}

// produceBatches runs the SCAN loop of namespace i and sends its keys in batches of at most
// BatchSize, within the key cap. It reports whether the scan ran to its end or to the cap.
func (f *flight) produceBatches(ctx context.Context, c nodeClient, n *node, i int, batches chan<- []string) bool {
	pattern := f.opts.Namespaces[i].Pattern
	count := int64(f.opts.BatchSize)
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, count).Result()
		if err != nil {
			f.fail(ctx, i, err)
			return false
		}
		f.reach(n)
		keys = dropCompanionKeys(keys)
		// SCAN COUNT is a hint: a reply can exceed it, so pipelines are cut to BatchSize.
		for len(keys) > 0 {
			batch := keys[:min(len(keys), f.opts.BatchSize)]
			keys = keys[len(batch):]
			allowed, more := f.reserve(i, len(batch))
			if allowed > 0 {
				select {
				case batches <- batch[:allowed]:
				case <-ctx.Done():
					return false
				}
			}
			if !more {
				return true
			}
		}
		if next == 0 {
			return true
		}
		cursor = next
	}
}

// dropCompanionKeys filters the lease library's counter keys out of a SCAN reply in place.
func dropCompanionKeys(keys []string) []string {
	out := keys[:0]
	for _, k := range keys {
		if !isCompanionKey(k) {
			out = append(out, k)
		}
	}
	return out
}

func isCompanionKey(key string) bool {
	return strings.HasSuffix(key, fenceSuffix) || strings.HasSuffix(key, writeFenceSuffix)
}

// inspector pipelines PTTL and OBJECT IDLETIME for batches of keys, for one worker. Its slices
// are reused from batch to batch: at a thousand keys a batch they were a large share of a
// scan's allocations, and the garbage collector's work competed with Redis for the CPU.
type inspector struct {
	c      nodeClient
	noIdle *atomic.Bool // shared by the node's workers: set once the node refused OBJECT IDLETIME
	ttls   []*redis.DurationCmd
	idles  []*redis.DurationCmd
	live   []KeyInfo
}

// inspect pipelines PTTL and OBJECT IDLETIME for keys (PTTL only once the node refused OBJECT
// IDLETIME) and returns the keys still alive, valid until the next call. Neither command touches
// the key, so the scan does not disturb the idle time it measures.
func (in *inspector) inspect(ctx context.Context, keys []string) (live []KeyInfo, idleKnown bool, err error) {
	wantIdle := !in.noIdle.Load()
	pipe := in.c.Pipeline()
	in.ttls = in.ttls[:0]
	in.idles = in.idles[:0]
	for _, k := range keys {
		in.ttls = append(in.ttls, pipe.PTTL(ctx, k))
		if wantIdle {
			in.idles = append(in.idles, pipe.ObjectIdleTime(ctx, k))
		}
	}
	// Exec's error is the first failed command's; each command is judged on its own below,
	// because a vanished key (nil reply) is not a failure.
	_, _ = pipe.Exec(ctx)

	idleKnown = wantIdle
	if wantIdle {
		for _, cmd := range in.idles {
			if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), lfuIdleError) {
				in.noIdle.Store(true)
				idleKnown = false
				break
			}
		}
	}
	live = in.live[:0]
	for j, k := range keys {
		ttl, err := in.ttls[j].Result()
		if err != nil {
			return nil, false, err
		}
		// go-redis returns PTTL's -2 (no such key) and -1 (no expiry) as raw -2ns and -1ns, not
		// scaled to milliseconds like real TTLs.
		switch ttl {
		case -2:
			continue
		case -1:
			ttl = NoTTL
		}
		ki := KeyInfo{Key: k, TTL: ttl}
		if idleKnown {
			idle, err := in.idles[j].Result()
			if errors.Is(err, redis.Nil) {
				continue // expired or deleted between the two commands
			}
			if err != nil {
				return nil, false, err
			}
			ki.Idle = idle
		}
		live = append(live, ki)
	}
	in.live = live
	return live, idleKnown, nil
}
