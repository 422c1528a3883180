package exporterconfig

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ClusterNodeHint completes a line that names an address given as addr (or --redis.addr) when
// that Redis turns out to be a node of a Redis Cluster (IsClusterNode).
const ClusterNodeHint = "is a Redis Cluster node: only the keys of that node are scanned; give the cluster's nodes in cluster_addrs (--redis.cluster-addr)"

// IsClusterNode reports whether client is a single-node client (addr, not cluster_addrs) whose
// Redis is a node of a Redis Cluster (INFO cluster: cluster_enabled:1). SCAN there walks that
// node's keys only, so the counts cover a part of the locks while every scrape looks complete.
// False when INFO is refused or fails: nothing is known then.
func IsClusterNode(ctx context.Context, client redis.UniversalClient) bool {
	single, ok := client.(*redis.Client)
	if !ok {
		return false
	}
	info, err := single.Info(ctx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}
