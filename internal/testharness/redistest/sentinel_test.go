package redistest

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSentinelLeadsAFailoverClientToTheMaster: a client that knows only the Sentinel and the
// name writes to the master the Sentinel was given.
func TestSentinelLeadsAFailoverClientToTheMaster(t *testing.T) {
	ctx := context.Background()
	master := Start(t)
	sentinel := StartSentinel(t, master, "locks")
	if sentinel.Addr == master.Addr {
		t.Fatalf("Sentinel and master share %s", sentinel.Addr)
	}
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "locks", SentinelAddrs: []string{sentinel.Addr}, MaxRetries: -1})
	defer fc.Close()
	if err := fc.Set(ctx, "k", "through the sentinel", 0).Err(); err != nil {
		t.Fatalf("set through the Sentinel: %v", err)
	}
	if got, err := master.Do(ctx, "GET", "k"); err != nil || got != "through the sentinel" {
		t.Fatalf("GET k on the master = %v, %v; want the value set through the Sentinel", got, err)
	}
}
