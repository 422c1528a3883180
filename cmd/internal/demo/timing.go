package demo

import (
	"context"
	"math/rand/v2"
	"time"
)

// sleep waits d or until ctx ends; it reports whether the full d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// between returns a random duration in [lo, hi).
func between(lo, hi time.Duration) time.Duration {
	return lo + rand.N(hi-lo)
}

func randN(n int) int { return rand.IntN(n) }
