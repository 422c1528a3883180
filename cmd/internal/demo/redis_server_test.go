package demo

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestStartRedisAndStop(t *testing.T) {
	ctx := context.Background()
	r, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping the started server: %v", err)
	}
	r.Stop()
	r.Stop() // a second Stop is harmless
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Error("server still answers after Stop")
	}
	if _, err := os.Stat(r.Dir()); !os.IsNotExist(err) {
		t.Errorf("server directory %s not removed: %v", r.Dir(), err)
	}
}

func TestStartRedisWithoutBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := StartRedis(context.Background()); err != ErrNoRedisServer {
		t.Fatalf("err = %v, want ErrNoRedisServer", err)
	}
}
