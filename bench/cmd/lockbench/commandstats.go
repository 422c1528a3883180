package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/commandstats"
)

// Where a mode's Redis CPU goes: INFO commandstats before and after its intervals. A command's
// usec is the time Redis spent executing it, not reading or writing its socket, so the deltas
// name the commands but do not add up to INFO cpu.

type cmdStats = commandstats.Stats

func readCmdStats(ctx context.Context, admin *redis.Client) (cmdStats, error) {
	info, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return commandstats.Parse(info), nil
}

// cmdDelta is one command's share of a span: its calls and execution time.
type cmdDelta struct {
	name  string
	calls int64
	exec  time.Duration
}

// cmdsSince returns the commands run between before and s, the costliest first. The bench's own
// INFO reads are among them: they cancel out in a difference of two spans (minusDeltas).
func cmdsSince(s, before cmdStats) []cmdDelta {
	var out []cmdDelta
	for name, st := range s {
		d := cmdDelta{name: name, calls: st.Calls - before[name].Calls, exec: time.Duration(st.Usec-before[name].Usec) * time.Microsecond}
		if d.calls > 0 {
			out = append(out, d)
		}
	}
	sortDeltas(out)
	return out
}

// sortDeltas puts the costliest command first.
func sortDeltas(d []cmdDelta) {
	slices.SortFunc(d, func(a, b cmdDelta) int { return cmp.Compare(b.exec, a.exec) })
}

// describeDeltas renders the first n deltas, each per interval of intervals: "pttl 1012× 0.9 ms".
func describeDeltas(deltas []cmdDelta, n, intervals int) string {
	var parts []string
	for _, d := range deltas[:min(n, len(deltas))] {
		parts = append(parts, fmt.Sprintf("`%s` %d× %.1f ms", strings.ReplaceAll(d.name, "|", " "),
			d.calls/int64(intervals), float64(d.exec.Microseconds())/1000/float64(intervals)))
	}
	return strings.Join(parts, ", ")
}
