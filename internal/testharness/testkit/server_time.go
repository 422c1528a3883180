package testkit

import (
	"context"
	"testing"
	"time"

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

// AwaitServerTime waits until the server's clock is past at (Unix milliseconds): a key written
// to expire at at has expired, whether or not Redis has reclaimed it yet.
func AwaitServerTime(t testing.TB, c redis.Cmdable, at int64) {
	t.Helper()
	for {
		now := ServerNow(t, c)
		if now > at {
			return
		}
		time.Sleep(time.Duration(at-now+1) * time.Millisecond)
	}
}
