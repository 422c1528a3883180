package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexSeesSwapDBHiddenByResetStat: a neighbour's CONFIG RESETSTAT zeroes INFO
// commandstats, where the index reads SWAPDB (tracking sends nothing for it). A SWAPDB next to a
// RESETSTAT, in one MULTI, must still be seen: the first scrape after it reports the keys the
// database now holds, not the index of the database swapped away, and the index comes back
// current and exact. A RESETSTAT alone costs one resync at most and changes no figure.
func TestIndexSeesSwapDBHiddenByResetStat(t *testing.T) {
	cases := []struct {
		name string
		// inDB0 and inDB1 are the lock keys in database 0 (the exporter's) and 1 before act.
		inDB0, inDB1 int64
		// earlierSwaps is how many SWAPDB of two unrelated databases ran before the exporter
		// started: the count a RESETSTAT then SWAPDB brings back to.
		earlierSwaps int
		act          [][]any // one MULTI
		want         int64   // lock keys in database 0 after act
	}{
		{"SWAPDB then RESETSTAT", 29, 300, 0, [][]any{{"SWAPDB", 0, 1}, {"CONFIG", "RESETSTAT"}}, 300},
		{"SWAPDB then RESETSTAT, empty index", 0, 300, 0, [][]any{{"SWAPDB", 0, 1}, {"CONFIG", "RESETSTAT"}}, 300},
		{"SWAPDB back to 0 lock keys, then RESETSTAT", 300, 0, 0, [][]any{{"SWAPDB", 0, 1}, {"CONFIG", "RESETSTAT"}}, 0},
		{"RESETSTAT then SWAPDB after an earlier SWAPDB", 29, 300, 1, [][]any{{"CONFIG", "RESETSTAT"}, {"SWAPDB", 0, 1}}, 300},
		{"RESETSTAT alone", 29, 300, 1, [][]any{{"CONFIG", "RESETSTAT"}}, 29},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.Start(t)
			c := srv.Client(t)
			fillLockKeys(t, c, tc.inDB0, "db0")
			fillLockKeys(t, srv.DBClient(t, 1), tc.inDB1, "db1")
			for range tc.earlierSwaps {
				if err := c.Do(ctx, "SWAPDB", 14, 15).Err(); err != nil {
					t.Fatal(err)
				}
			}
			namespaces := indexNamespaces[:1]
			s := indexed(t, c, namespaces)
			if got := s.Scan(ctx).Namespaces[0].Keys; got != tc.inDB0 {
				t.Fatalf("before: %d keys, want %d", got, tc.inDB0)
			}
			redistest.Multi(t, c, tc.act)
			res := s.Scan(ctx)
			if ns := res.Namespaces[0]; !res.Up || ns.Keys != tc.want {
				t.Fatalf("first scrape after %s: up=%v %d keys (%s/%s, age %v), want %d",
					tc.name, res.Up, ns.Keys, ns.Mode, ns.ModeReason, ns.IndexAge, tc.want)
			}
			res = waitCurrent(t, s)
			if got := res.Namespaces[0].Keys; got != tc.want {
				t.Fatalf("index current again: %d keys, want %d", got, tc.want)
			}
			if n := res.IndexResyncs[index.ResyncStatsReset] + res.IndexResyncs[index.ResyncSwapDB]; n != 1 {
				t.Errorf("resyncs %v: want one, for the stats reset or the SWAPDB", res.IndexResyncs)
			}
			matchesFreshWalk(t, s, c, namespaces)
		})
	}
}

// fillLockKeys writes n lock keys of the jobs namespace with a one-hour TTL.
func fillLockKeys(t *testing.T, c *redis.Client, n int64, tag string) {
	t.Helper()
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(context.Background(), fmt.Sprintf("jobs:%s:%d", tag, i), "t", time.Hour)
	}
	if _, err := pipe.Exec(context.Background()); err != nil && n > 0 {
		t.Fatal(err)
	}
}
