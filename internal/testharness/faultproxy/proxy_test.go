package faultproxy

import (
	"context"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestProxyModes(t *testing.T) {
	srv := redistest.Start(t)
	// The server's reaper goroutine lives until test cleanup; everything started below must not.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := Start(t, srv.Addr)
	// Each PING is bounded by its case's context: a short one where the fault must make it
	// fail, a long one where it must get through, so that a starved machine cannot turn an
	// answer that is merely late into a failure.
	c := redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()

	ping := func(timeout time.Duration) (time.Duration, error) {
		start := time.Now() // before the deadline is set, so took >= timeout when it is met
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err := c.Ping(ctx).Err()
		return time.Since(start), err
	}
	const (
		failFast = 300 * time.Millisecond // the bound of a PING the fault must fail
		patient  = 10 * time.Second       // the bound of a PING that must get through
	)
	cases := []struct {
		name    string
		apply   func()
		wantErr bool
		minTook time.Duration
	}{
		{"pass", p.Heal, false, 0},
		{"latency below timeout", func() { p.SetLatency(100 * time.Millisecond) }, false, 100 * time.Millisecond},
		{"latency above timeout", func() { p.SetLatency(time.Second) }, true, failFast},
		{"blackhole", p.Blackhole, true, failFast},
		{"reset", p.Reset, true, 0},
		{"healed", p.Heal, false, 0},
	}
	for _, tc := range cases {
		tc.apply()
		timeout := patient
		if tc.wantErr {
			timeout = failFast
		}
		took, err := ping(timeout)
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
