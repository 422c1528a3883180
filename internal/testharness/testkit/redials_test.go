package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A client whose dials to a refused address fail PoolSize times starts go-redis' redial: it is
// still running while the client is open, and ends within about a second of Close.
func TestAwaitRedialsEnded(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: UnusedAddr(t), PoolSize: 1, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	_ = rdb.Ping(context.Background()).Err()
	if AwaitRedialsEnded(300 * time.Millisecond) {
		t.Fatal("no redial was running for an open client whose dial failed")
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if !AwaitRedialsEnded(5 * time.Second) {
		t.Fatal("the redial outlived its closed client by more than 5 s")
	}
}
