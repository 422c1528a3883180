package main

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// TestLockTrafficSteps checks the lock traffic's accounting against a real redis-server: each
// holder takes a lock, renews it, releases it, one operation at a time, so that the rates the
// cost runs state are lock operations Redis served, a third of each kind.
func TestLockTrafficSteps(t *testing.T) {
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	const holders = 4
	for _, tc := range []struct {
		ops        int
		wantLocks  int64
		wantCmdSum map[string]int64 // calls per command after ops
	}{
		{ops: holders, wantLocks: holders, wantCmdSum: map[string]int64{"set": holders}},
		{ops: 2 * holders, wantLocks: holders, wantCmdSum: map[string]int64{"set": holders, "evalsha": holders}},
		{ops: 3 * holders, wantLocks: 0, wantCmdSum: map[string]int64{"set": holders}},
	} {
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		traffic := newLockTraffic(c, holders)
		for range tc.ops {
			if err := traffic.op(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.DBSize(ctx).Val(); n != tc.wantLocks {
			t.Errorf("after %d ops: %d lock keys, want %d", tc.ops, n, tc.wantLocks)
		}
		stats, err := readCmdStats(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for cmd, want := range tc.wantCmdSum {
			if got := stats[cmd].Calls; got != want {
				t.Errorf("after %d ops: %d %s calls, want %d", tc.ops, got, cmd, want)
			}
		}
		if tc.ops == holders {
			if ttl := c.PTTL(ctx, traffic.holders[0].key).Val(); ttl <= 0 || ttl > lockTrafficTTL {
				t.Errorf("a taken lock's PTTL is %v, want (0, %v]", ttl, lockTrafficTTL)
			}
		}
	}
}

// TestPacedMakesEveryCall: however late the loop wakes, paced makes rate×d calls.
func TestPacedMakesEveryCall(t *testing.T) {
	for _, tc := range []struct {
		rate int
		d    time.Duration
		want int
	}{{rate: 100, d: 200 * time.Millisecond, want: 20}, {rate: 5000, d: 100 * time.Millisecond, want: 500}, {rate: 1, d: 500 * time.Millisecond, want: 0}} {
		calls := 0
		if err := paced(context.Background(), tc.rate, tc.d, func(context.Context) error { calls++; return nil }); err != nil {
			t.Fatal(err)
		}
		if calls != tc.want {
			t.Errorf("paced(%d/s, %v) made %d calls, want %d", tc.rate, tc.d, calls, tc.want)
		}
	}
}
