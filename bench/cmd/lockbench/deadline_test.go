package main

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// TestAutoPipelineDeadlines records why the "+ AutoPipeline" rows are reference only: against a
// server that stopped answering, the plain client (ContextTimeoutEnabled) gives up at the
// caller's deadline, while go-redis's AutoPipeline face waits for its batch past it, bounded
// only by the read timeout (and retries). lease's RenewTimeout, AcquireTimeout and
// ReleaseTimeout rely on the former. If a go-redis upgrade makes this test fail,
// docs/performance.md's advice on AutoPipeline needs revisiting.
func TestAutoPipelineDeadlines(t *testing.T) {
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	const deadline = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		auto    bool
		atLeast time.Duration
		atMost  time.Duration
	}{
		{name: "plain client honours the deadline", auto: false, atLeast: deadline, atMost: time.Second},
		{name: "AutoPipeline waits past it", auto: true, atLeast: 2 * deadline, atMost: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{
				Addr: srv.Addr(), ContextTimeoutEnabled: true,
				ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1,
			})
			defer rdb.Close()
			var c redis.UniversalClient = rdb
			if tc.auto {
				ap, err := rdb.AutoPipeline()
				if err != nil {
					t.Fatal(err)
				}
				c = ap
			}
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Pause(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = srv.Resume() }()

			start := time.Now() // before the deadline is set, so took >= deadline when it is met
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			err := c.SetNX(ctx, "deadline-check", "v", time.Second).Err()
			took := time.Since(start)
			if err == nil {
				t.Fatal("SET NX against a stopped server succeeded")
			}
			if took < tc.atLeast || took > tc.atMost {
				t.Fatalf("SET NX with a %s deadline returned after %s (%v), want between %s and %s",
					deadline, took, err, tc.atLeast, tc.atMost)
			}
			t.Logf("returned after %s: %v", took.Round(time.Millisecond), err)
		})
	}
}
