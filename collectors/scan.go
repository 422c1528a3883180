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

// companionSuffixes end the counter keys the lease library keeps next to locks and data
// (lease.FenceKey: "{lock}:fence", or "lock:fence" when the lock key has its own hash tag;
// lease.WriteFenceKey: the same with ":writefence"). A namespace pattern such as "{jobs}:*"
// would otherwise count those counters, which never expire, as locks without TTL.
var companionSuffixes = [...]string{":fence", ":writefence"}

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

func (f *flight) scanNamespace(ctx context.Context, c nodeClient, n *node, noIdle *atomic.Bool, i int) {
	pattern := f.opts.Namespaces[i].Pattern
	count := int64(f.opts.BatchSize)
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, count).Result()
		if err != nil {
			f.fail(ctx, i, err)
			return
		}
		f.reach(n)
		keys = dropCompanionKeys(keys)
		// SCAN COUNT is a hint: a reply can exceed it, so pipelines are cut to BatchSize.
		for len(keys) > 0 {
			batch := keys[:min(len(keys), f.opts.BatchSize)]
			keys = keys[len(batch):]
			allowed, more := f.reserve(i, len(batch))
			if allowed > 0 {
				live, idleKnown, err := inspectKeys(ctx, c, batch[:allowed], noIdle)
				if err != nil {
					f.fail(ctx, i, err)
					return
				}
				if !idleKnown {
					f.idleUnavailable()
				}
				f.merge(i, live, idleKnown)
			}
			if !more {
				f.nsDone(i, time.Now())
				return
			}
		}
		if next == 0 {
			f.nsDone(i, time.Now())
			return
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
	for _, suffix := range companionSuffixes {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// inspectKeys pipelines PTTL and OBJECT IDLETIME for keys (PTTL only once the node refused
// OBJECT IDLETIME) and returns the keys still alive. Neither command touches the key, so the
// scan does not disturb the idle time it measures.
func inspectKeys(ctx context.Context, c nodeClient, keys []string, noIdle *atomic.Bool) (live []KeyInfo, idleKnown bool, err error) {
	wantIdle := !noIdle.Load()
	pipe := c.Pipeline()
	ttls := make([]*redis.DurationCmd, len(keys))
	var idles []*redis.DurationCmd
	if wantIdle {
		idles = make([]*redis.DurationCmd, len(keys))
	}
	for j, k := range keys {
		ttls[j] = pipe.PTTL(ctx, k)
		if wantIdle {
			idles[j] = pipe.ObjectIdleTime(ctx, k)
		}
	}
	// Exec's error is the first failed command's; each command is judged on its own below,
	// because a vanished key (nil reply) is not a failure.
	_, _ = pipe.Exec(ctx)

	idleKnown = wantIdle
	if wantIdle {
		for _, cmd := range idles {
			if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), lfuIdleError) {
				noIdle.Store(true)
				idleKnown = false
				break
			}
		}
	}
	live = make([]KeyInfo, 0, len(keys))
	for j, k := range keys {
		ttl, err := ttls[j].Result()
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
			idle, err := idles[j].Result()
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
	return live, idleKnown, nil
}
