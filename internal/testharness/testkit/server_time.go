package testkit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ServerNow is the server's TIME in Unix milliseconds: the clock the lock-key index keeps its
// times on, so a test compares them with the server's and not the host's.
func ServerNow(t testing.TB, c redis.Cmdable) int64 {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}
