package redistest

import (
	"context"
	"testing"
	"time"
)

func TestCluster(t *testing.T) {
	cl := StartCluster(t, 3, 0)
	ctx := context.Background()
	c := cl.Client(t)
	for _, k := range []string{"a", "b", "c", "{x}1", "{x}2"} {
		if err := c.Set(ctx, k, "v", time.Minute).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	m := cl.MasterFor(t, "{x}1")
	if n, err := m.Do(ctx, "EXISTS", "{x}1"); err != nil || n.(int64) != 1 {
		t.Fatalf("MasterFor({x}1)=%s does not hold the key: %v %v", m.Addr, n, err)
	}
}
