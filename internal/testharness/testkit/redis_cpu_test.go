package testkit

import (
	"context"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestRedisCPU reads a real server's CPU time, which never goes back while it works.
func TestRedisCPU(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	before, err := RedisCPU(ctx, c)
	if err != nil || before <= 0 {
		t.Fatalf("RedisCPU = %v, %v; want a positive time", before, err)
	}
	for range 2000 {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if after, err := RedisCPU(ctx, c); err != nil || after < before {
		t.Errorf("RedisCPU after 2000 PINGs = %v, %v; want at least %v", after, err, before)
	}
}
