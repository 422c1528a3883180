package testkit

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// The connection that turned tracking on is found among others that did not.
func TestTrackingClientID(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	plain := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = plain.Close() })
	tracking := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 3})
	t.Cleanup(func() { _ = tracking.Close() })
	conn := tracking.Conn()
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.Do(ctx, "CLIENT", "TRACKING", "ON").Err(); err != nil {
		t.Fatal(err)
	}
	id, err := conn.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := TrackingClientID(t, plain); got != strconv.FormatInt(id, 10) {
		t.Fatalf("TrackingClientID = %s, want %d", got, id)
	}
}
