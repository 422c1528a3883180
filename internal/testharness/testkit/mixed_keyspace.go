package testkit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// MixedKeyspaceNamespaces names the lock namespaces of SeedMixedKeyspace: its lock keys are
// spread over the first three, and the last five match nothing, so that a benchmark can show
// what declaring more namespaces costs. A fresh slice each call.
func MixedKeyspaceNamespaces() []string {
	return []string{"sched", "wf", "approval", "none1", "none2", "none3", "none4", "none5"}
}

// MixedKeyspacePattern is the key pattern of namespace ns in the mixed keyspace.
func MixedKeyspacePattern(ns string) string { return "app:" + ns + ":lock:*" }

// SeedMixedKeyspace adds lock keys from..to-1 ("app:<ns>:lock:<i>" over the first three
// MixedKeyspaceNamespaces; one in fifty without TTL, the others with 10 s to 10 min plus an hour,
// so that none expires during a run) and as many unrelated keys ("app:data:<i>": strings,
// hashes, lists and sets), pipelined 10k at a time. Seeding a larger size after a smaller one
// from the smaller size on grows the same keyspace.
func SeedMixedKeyspace(ctx context.Context, c redis.Cmdable, from, to int) error {
	namespaces := MixedKeyspaceNamespaces()
	ttls := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 10 * time.Minute}
	for start := from; start < to; start += 10_000 {
		pipe := c.Pipeline()
		for i := start; i < min(start+10_000, to); i++ {
			ttl := ttls[i%len(ttls)] + time.Hour
			if i%50 == 0 {
				ttl = 0
			}
			pipe.Set(ctx, "app:"+namespaces[i%3]+":lock:"+strconv.Itoa(i), "token-0123456789abcdef", ttl)
			addOtherKey(ctx, pipe, "app:data:"+strconv.Itoa(i), i)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("seed the mixed keyspace: %w", err)
		}
	}
	return nil
}

// addOtherKey queues one unrelated key of the type i selects.
func addOtherKey(ctx context.Context, pipe redis.Pipeliner, key string, i int) {
	switch i % 4 {
	case 0:
		pipe.Set(ctx, key, "value", 0)
	case 1:
		pipe.HSet(ctx, key, "field", "value")
	case 2:
		pipe.RPush(ctx, key, "item")
	default:
		pipe.SAdd(ctx, key, "member")
	}
}
