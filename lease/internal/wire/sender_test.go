package wire

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// The Sender pipelines on a client of one deployment only: on a Cluster or Ring client the cap
// on sends would be shared by every node, and one stalled node would hold it.
func TestSenderOnlyOnOneDeployment(t *testing.T) {
	single := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{sharedAddr}, ContextTimeoutEnabled: true})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": sharedAddr}})
	t.Cleanup(func() { _, _, _ = single.Close(), cluster.Close(), ring.Close() })
	for _, tc := range []struct {
		name      string
		rdb       redis.UniversalClient
		pipelines bool
	}{
		{"single node", single, true},
		{"cluster", cluster, false},
		{"ring", ring, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewSender(tc.rdb).batch != nil; got != tc.pipelines {
				t.Errorf("pipelines = %v, want %v", got, tc.pipelines)
			}
			if NewSingleSender(tc.rdb).batch != nil {
				t.Error("NewSingleSender pipelines")
			}
		})
	}
}
