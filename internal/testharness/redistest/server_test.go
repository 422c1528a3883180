package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestServerLifecycle(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	// Honouring the context and not retrying: otherwise the paused PING waits out go-redis's
	// 3s read timeout (5s in all) and the PING after Kill its dial retries, which prove nothing
	// about the server.
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("set: %v", err)
	}

	s.Pause()
	shortCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.Ping(shortCtx).Err()
	cancel()
	if err == nil {
		t.Fatal("PING answered while the server was paused")
	}
	s.Resume()

	s.Restart()
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after restart: exists=%d err=%v, want an empty dataset", n, err)
	}
	s.Kill()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
}
