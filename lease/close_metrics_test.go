package lease

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Clients made and closed on one registry (a Client per task on the default registry) leave
// lock_held_oldest_seconds asking only the open ones: a closed Client, which renews nothing
// more, no longer reports its lease as held, and is not kept reachable by the registry's
// collector.
func TestClosedClientLeavesTheOldestHold(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	reg := prometheus.NewRegistry()
	open := func(t *testing.T) (*Client, *Namespace) {
		t.Helper()
		c, err := New(rdb, Options{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Declare("jobs", Policy{})
		if err != nil {
			t.Fatal(err)
		}
		return c, n
	}
	oldest := func() float64 { return testkit.MetricValue(t, reg, "lock_held_oldest_seconds", namespaceLabel, "jobs") }

	closing, n := open(t)
	if _, err := n.Acquire(ctx, uniqueKey(t)); err != nil {
		t.Fatal(err)
	}
	firstHeld := time.Now() // the first lease is at least this old
	staying, m := open(t)
	defer staying.Close()
	time.Sleep(500 * time.Millisecond)
	secondAsked := time.Now() // the second lease is at most this old
	l, err := m.Acquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	// Ages are compared with the test's own clock readings, not with fixed times, so a slow
	// machine cannot blur the first lease with the second: a lower bound is read before the
	// scrape, an upper bound after it.
	if min, got := time.Since(firstHeld).Seconds(), oldest(); got < min {
		t.Fatalf("with both clients holding: %v, want the first lease's age (at least %v)", got, min)
	}
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	if got, max := oldest(), time.Since(secondAsked).Seconds(); got > max {
		t.Errorf("after the first client closed: %v, want the open client's lease (at most %v)", got, max)
	}
	for range 100 {
		c, _ := open(t)
		_ = c.Close()
	}
	if got, max := oldest(), time.Since(secondAsked).Seconds(); got > max {
		t.Errorf("after 100 clients opened and closed: %v, want the open client's lease (at most %v)", got, max)
	}
}
