package walk

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// reloadShare is the part of a call's remaining time that go-redis's reload of the slot map may
// take before ForEachMaster goes on with the map read last.
const reloadShare = 4

// ForEachMaster calls fn with the client of each master of cc's slot map, concurrently, as
// cc.ForEachMaster does, and returns the error of loading the map, if any; fn gets no context
// (the callers bound their commands themselves).
//
// go-redis reloads the map for ForEachMaster by asking the nodes it knows one at a time, in
// random order, under the caller's context. A node that accepts connections and answers
// nothing (SIGSTOP, a frozen host, a replica or an old master that a failover replaced) held
// that reload until the context ended when it came first, and the scan that followed had no
// time left: lock_exporter_up 0 while every master answered (TestClusterHungNodeIsNotDown).
// The reload may take a quarter of the time left; past that, go-redis uses the map it read
// last (a first load that fails is still an error).
func ForEachMaster(ctx context.Context, cc *redis.ClusterClient, fn func(c *redis.Client)) error {
	rctx, cancel := ReloadContext(ctx)
	defer cancel()
	return ForEachMasterWithin(rctx, cc, fn)
}

// ReloadContext is ctx cut to a quarter of its time left: the slot map's reload's share.
func ReloadContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithTimeout(ctx, time.Until(d)/reloadShare)
	}
	return ctx, func() {}
}

// ForEachMasterWithin is ForEachMaster with the reload bounded by rctx itself: the caller has
// cut it to the share (and may have spent part of the share already).
func ForEachMasterWithin(rctx context.Context, cc *redis.ClusterClient, fn func(c *redis.Client)) error {
	return cc.ForEachMaster(rctx, func(_ context.Context, c *redis.Client) error {
		fn(c)
		return nil
	})
}
