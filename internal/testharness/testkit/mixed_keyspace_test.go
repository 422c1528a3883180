package testkit

import (
	"context"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

func TestSeedMixedKeyspace(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	if err := SeedMixedKeyspace(ctx, c, 0, 200); err != nil {
		t.Fatal(err)
	}
	// Growing from the smaller size adds only the new keys.
	if err := SeedMixedKeyspace(ctx, c, 200, 300); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(ctx).Val(); n != 600 {
		t.Errorf("DBSIZE %d, want 300 lock keys + 300 others", n)
	}
	for _, ns := range MixedKeyspaceNamespaces() {
		keys, err := c.Keys(ctx, MixedKeyspacePattern(ns)).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if ns == "sched" || ns == "wf" || ns == "approval" {
			want = 100
		}
		if len(keys) != want {
			t.Errorf("namespace %s: %d lock keys, want %d", ns, len(keys), want)
		}
	}
	for key, want := range map[string]string{"app:data:0": "string", "app:data:1": "hash", "app:data:2": "list", "app:data:3": "set"} {
		if got := c.Type(ctx, key).Val(); got != want {
			t.Errorf("TYPE %s = %s, want %s", key, got, want)
		}
	}
	if ttl := c.PTTL(ctx, "app:sched:lock:0").Val(); ttl != -1 {
		t.Errorf("lock key 0 has PTTL %v, want none (one in fifty has no TTL)", ttl)
	}
	if ttl := c.PTTL(ctx, "app:wf:lock:1").Val(); ttl <= 0 {
		t.Errorf("lock key 1 has PTTL %v, want an expiry", ttl)
	}
}

func TestPeakHeapSeesWhatFHolds(t *testing.T) {
	const size = 32 << 20
	var keep []byte
	peak := PeakHeap(func() {
		keep = make([]byte, size)
		for i := range keep {
			keep[i] = 1
		}
	})
	if peak < size {
		t.Errorf("peak heap %d bytes, want at least the %d f held", peak, size)
	}
	_ = keep
}
