package faultproxy

import (
	"context"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestProxyModes(t *testing.T) {
	srv := redistest.Start(t)
	// The server's reaper goroutine lives until test cleanup; everything started below must not.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := Start(t, srv.Addr)
	c := redis.NewClient(&redis.Options{Addr: p.Addr, ReadTimeout: 300 * time.Millisecond,
		WriteTimeout: 300 * time.Millisecond, DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()

	ping := func() (time.Duration, error) {
		start := time.Now()
		err := c.Ping(ctx).Err()
		return time.Since(start), err
	}
	cases := []struct {
		name    string
		apply   func()
		wantErr bool
		minTook time.Duration
	}{
		{"pass", p.Heal, false, 0},
		{"latency below timeout", func() { p.SetLatency(100 * time.Millisecond) }, false, 100 * time.Millisecond},
		{"latency above timeout", func() { p.SetLatency(time.Second) }, true, 300 * time.Millisecond},
		{"blackhole", p.Blackhole, true, 300 * time.Millisecond},
		{"reset", p.Reset, true, 0},
		{"healed", p.Heal, false, 0},
	}
	for _, tc := range cases {
		tc.apply()
		took, err := ping()
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: PING err=%v, want error=%v", tc.name, err, tc.wantErr)
		}
		if took < tc.minTook {
			t.Fatalf("%s: PING took %s, want at least %s", tc.name, took, tc.minTook)
		}
	}
	c.Close()
	p.Close()
}
