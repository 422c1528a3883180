package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A client whose dials to a refused address fail PoolSize times starts go-redis' redial (on the
// goroutine that dialled, which may finish after the command has its error): it runs while the
// client is open, and ends within about a second of Close.
func TestAwaitRedialsEnded(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: UnusedAddr(t), PoolSize: 1, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	_ = rdb.Ping(context.Background()).Err()
	Eventually(t, 5*time.Second, "go-redis to start its redial", redialRunning)
	if AwaitRedialsEnded(300 * time.Millisecond) {
		t.Fatal("the redial of an open client whose dial failed was not waited for")
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if !AwaitRedialsEnded(5 * time.Second) {
		t.Fatal("the redial outlived its closed client by more than 5 s")
	}
}
