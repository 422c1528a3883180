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

// TestClusterMigrateSlotAndFailover: a migrated slot's keys live on the new master, which
// serves the slot; a failover promotes a replica that serves the old master's keys.
func TestClusterMigrateSlotAndFailover(t *testing.T) {
	cl := StartCluster(t, 3, 1)
	ctx := context.Background()
	c := cl.Client(t)
	for _, k := range []string{"{m}1", "{m}2", "{m}3"} {
		if err := c.Set(ctx, k, "v", time.Minute).Err(); err != nil {
			t.Fatalf("set %s: %v", k, err)
		}
	}
	from := cl.MasterFor(t, "{m}1")
	var to *Server
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
		}
	}
	cl.MigrateSlot(t, cl.Slot(t, "{m}1"), to)
	if got := cl.MasterFor(t, "{m}1"); got != to {
		t.Fatalf("slot served by %s, want %s", got.Addr, to.Addr)
	}
	if n, err := to.Do(ctx, "EXISTS", "{m}1", "{m}2", "{m}3"); err != nil || n.(int64) != 3 {
		t.Fatalf("new owner holds %v keys (%v), want 3", n, err)
	}
	if n, err := from.Do(ctx, "DBSIZE"); err != nil || n.(int64) != 0 {
		t.Fatalf("old owner still holds %v keys (%v)", n, err)
	}
	promoted := cl.Failover(t, to)
	if got := cl.MasterFor(t, "{m}1"); got != promoted || promoted == to {
		t.Fatalf("after failover the slot is served by %s, want the promoted replica %s", got.Addr, promoted.Addr)
	}
	if n, err := promoted.Do(ctx, "EXISTS", "{m}1", "{m}2", "{m}3"); err != nil || n.(int64) != 3 {
		t.Fatalf("promoted replica holds %v keys (%v), want 3", n, err)
	}
	if len(cl.Masters(t)) != 3 {
		t.Fatalf("%d masters after the failover, want 3", len(cl.Masters(t)))
	}
}
