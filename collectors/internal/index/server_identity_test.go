package index

import (
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSlotMap: a master's identity is the slots it serves itself, found by its address; an
// address not in the map (translated on the way) falls back to the whole map.
func TestSlotMap(t *testing.T) {
	a := redis.ClusterNode{ID: "id-a", Addr: "10.0.0.1:6379"}
	b := redis.ClusterNode{ID: "id-b", Addr: "10.0.0.2:6379"}
	ranges := []redis.ClusterSlot{
		{Start: 8192, End: 16383, Nodes: []redis.ClusterNode{b, a}},
		{Start: 0, End: 100, Nodes: []redis.ClusterNode{a}},
		{Start: 101, End: 8191, Nodes: []redis.ClusterNode{b}},
	}
	if got := SlotMap(ranges, a.Addr); got != "own 0-100 " {
		t.Errorf("a: %q", got)
	}
	if got := SlotMap(ranges, b.Addr); got != "own 101-8191 8192-16383 " {
		t.Errorf("b: %q", got)
	}
	if got := SlotMap(ranges, "redis-a.example:6379"); got != "all 0-100:id-a 101-8191:id-b 8192-16383:id-b " {
		t.Errorf("unknown address: %q", got)
	}
	moved := slices.Clone(ranges)
	moved[1].Nodes = []redis.ClusterNode{b}
	if SlotMap(moved, a.Addr) == SlotMap(ranges, a.Addr) || SlotMap(moved, "x:1") == SlotMap(ranges, "x:1") {
		t.Error("a slot move left the identity unchanged")
	}
}
