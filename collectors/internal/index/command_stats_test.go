package index

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestCommandStatsSeeWhatReplacesData reads INFO commandstats of a real server before and after
// a neighbour's commands, as the index's identity check does whatever its feed: SWAPDB and
// flushes are seen, run alone, in a MULTI or from a script, and so is a CONFIG RESETSTAT that
// could hide them; reads and writes are not.
func TestCommandStatsSeeWhatReplacesData(t *testing.T) {
	cases := []struct {
		name string
		// earlierSwaps run before the first reading: the count a reset then SWAPDB returns to.
		earlierSwaps int
		act          [][]any
		inMulti      bool
		want         DataChange
	}{
		{name: "reads and writes", act: [][]any{{"SET", "jobs:1", "t"}, {"GET", "jobs:1"}, {"DEL", "jobs:1"}}},
		{name: "writes in a MULTI and a script", inMulti: true, act: [][]any{{"SET", "jobs:1", "t"}, {"EVAL", "return redis.call('del', KEYS[1])", 1, "jobs:1"}}},
		{name: "SWAPDB", act: [][]any{{"SWAPDB", 0, 1}}, want: DataSwapped},
		{name: "SWAPDB from a script", act: [][]any{{"EVAL", "return redis.call('swapdb', 0, 1)", 0}}, want: DataSwapped},
		{name: "FLUSHDB of another database", act: [][]any{{"SELECT", 5}, {"FLUSHDB"}}, inMulti: true, want: DataFlushed},
		{name: "FLUSHALL from a script", act: [][]any{{"EVAL", "return redis.call('flushall')", 0}}, want: DataFlushed},
		{name: "CONFIG RESETSTAT", act: [][]any{{"CONFIG", "RESETSTAT"}}, want: CountsReset},
		{name: "SWAPDB then RESETSTAT in a MULTI", inMulti: true, act: [][]any{{"SWAPDB", 0, 1}, {"CONFIG", "RESETSTAT"}}, want: CountsReset},
		{name: "FLUSHALL then RESETSTAT in a MULTI", inMulti: true, act: [][]any{{"FLUSHALL"}, {"CONFIG", "RESETSTAT"}}, want: CountsReset},
		{name: "RESETSTAT then SWAPDB, first SWAPDB", inMulti: true, act: [][]any{{"CONFIG", "RESETSTAT"}, {"SWAPDB", 0, 1}}, want: DataSwapped},
		{name: "RESETSTAT then SWAPDB, as many as before", earlierSwaps: 1, inMulti: true, act: [][]any{{"CONFIG", "RESETSTAT"}, {"SWAPDB", 0, 1}}, want: CountsReset},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := redistest.Start(t)
			c := srv.Client(t)
			for range tc.earlierSwaps {
				if err := c.Do(ctx, "SWAPDB", 14, 15).Err(); err != nil {
					t.Fatal(err)
				}
			}
			// A server in use: commands counted before the first reading.
			c.Set(ctx, "other", "v", 0)
			c.Get(ctx, "other")
			before := readCommandStats(t, c)
			neighbour := srv.DBClient(t, 0)
			if tc.inMulti {
				redistest.Multi(t, neighbour, tc.act)
			} else {
				for _, args := range tc.act {
					if err := neighbour.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
						t.Fatalf("%v: %v", args, err)
					}
				}
			}
			if got := before.DatasetChange(readCommandStats(t, c)); got != tc.want {
				t.Fatalf("datasetChange %d, want %d", got, tc.want)
			}
		})
	}
}

func readCommandStats(t *testing.T, c *redis.Client) CommandStats {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	stats := ParseCommandStats(info)
	if len(stats) == 0 {
		t.Fatalf("no command counts in %q", info)
	}
	return stats
}
