package walk

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// NodeClient is what a walk needs from a connection to one Redis node (or one logical node,
// such as a Sentinel-managed master).
type NodeClient interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	ScanType(ctx context.Context, cursor uint64, match string, count int64, keyType string) *redis.ScanCmd
	DBSize(ctx context.Context) *redis.IntCmd
	Pipeline() redis.Pipeliner
}

// NodeAddr is the address of c's node, "" for a client that does not say.
func NodeAddr(c NodeClient) string {
	if o, ok := c.(interface{ Options() *redis.Options }); ok {
		return o.Options().Addr
	}
	return ""
}
