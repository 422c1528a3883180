package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/collectors"
)

// ownCycle is the share of the time the backstop walk of a keyspace of keys goes on: a walk at
// the default pace, then the rest between walks.
func ownCycle(keys int) float64 {
	walk := time.Duration(float64(keys) / collectors.DefaultBackstopKeysPerSecond * float64(time.Second))
	return walk.Seconds() / (walk + collectors.DefaultBackstopEvery).Seconds()
}

// ownShares are one feed's figures at one rate, per window, above the locks-alone windows.
type ownShares struct {
	walking, resting, beforeWalking time.Duration
	hasBefore                       bool
}

// cycle is the share over a whole walk-and-rest cycle, walking being the share while the walk
// goes on.
func (s ownShares) cycle(walking time.Duration, duty float64) time.Duration {
	return walking - time.Duration((1-duty)*float64(s.walking-s.resting))
}

// sharesOf collects feed's shares from rr, alone being the median locks-alone window.
func sharesOf(rr rateRuns, feed string, alone time.Duration) ownShares {
	var s ownShares
	for _, r := range rr.runs {
		if r.kind.index == nil || string(r.kind.index.feed) != feed {
			continue
		}
		share := medianDuration(r.cpu) - alone
		switch {
		case r.kind.before:
			s.beforeWalking, s.hasBefore = share, true
		case r.kind.walking:
			s.walking = share
		default:
			s.resting = share
		}
	}
	return s
}

// lockOwnMarkdown renders a -lock-own-cost run.
func lockOwnMarkdown(results []rateRuns, ic indexCmpConfig, oc lockOwnConfig, redisVer string) string {
	var b strings.Builder
	duty := ownCycle(ic.otherKeys + ic.locks)
	b.WriteString("\n## The exporter against the locks' own\n\n")
	fmt.Fprintf(&b, "One redis-server %s with %s other keys and %s lock keys; a lock client's traffic (redis-py's `Lock`: "+
		"`SET NX PX`, its reacquire script, its release script, a third each, one command per round trip) at each rate, "+
		"in %v windows: idle, the locks alone, and the locks with lock-exporter's index attached on each feed as the "+
		"documented ACL user (no holder grant; each index in a process of its own; one scrape per window), its backstop walk "+
		"going on throughout the window at the default %d keys/s (walking) or not (resting); rotated order, medians of %d rounds "+
		"(`go run ./cmd/lockbench -lock-own-cost`, in `bench/`).\n\n",
		redisVer, humanCount(ic.otherKeys), humanCount(ic.locks), oc.window, collectors.DefaultBackstopKeysPerSecond, oc.rounds)
	fmt.Fprintf(&b, "Over a cycle: a walk of this keyspace takes %.0f minutes at that pace and rests %v, so it goes on %.0f%% of the time; "+
		"the cycle's share is resting + %.2f × (walking − resting). The before rows (%s) have only walking windows: their cycle "+
		"uses the same rows' backstop share (walking − resting) as after, the backstop's code being the same.\n\n",
		float64(ic.otherKeys+ic.locks)/collectors.DefaultBackstopKeysPerSecond/60, collectors.DefaultBackstopEvery, 100*duty, duty, beforeName(oc))
	b.WriteString("| lock operations/s | the locks' own per window | feed | code | walking | resting | ÷ the locks' own, walking | **÷ the locks' own, over a cycle** |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, rr := range results {
		writeOwnRows(&b, rr, duty)
	}
	writeOwnCommands(&b, results, oc.rounds)
	return b.String()
}

func beforeName(oc lockOwnConfig) string {
	if oc.before == "" {
		return "none in this run"
	}
	return "`-lock-own-before " + oc.before + "`"
}

// writeOwnRows writes one rate's rows, per feed after and (where measured) before.
func writeOwnRows(b *strings.Builder, rr rateRuns, duty float64) {
	idle, alone := medianDuration(rr.runs[0].cpu), medianDuration(rr.runs[1].cpu)
	own := (alone - idle).Seconds()
	for _, feed := range []collectors.FeedSource{collectors.FeedTracking, collectors.FeedNotifications} {
		s := sharesOf(rr, string(feed), alone)
		if s.hasBefore {
			c := s.cycle(s.beforeWalking, duty)
			fmt.Fprintf(b, "| %d | %.3f s | %s | before | %.3f s | — | %.2f× | %.2f× |\n", rr.rate, own, feed,
				s.beforeWalking.Seconds(), s.beforeWalking.Seconds()/own, c.Seconds()/own)
		}
		c := s.cycle(s.walking, duty)
		fmt.Fprintf(b, "| %d | %.3f s | %s | after | %.3f s | %.3f s | %.2f× | **%.2f×** |\n", rr.rate, own, feed,
			s.walking.Seconds(), s.resting.Seconds(), s.walking.Seconds()/own, c.Seconds()/own)
	}
}

// writeOwnCommands writes, per rate and attached kind, the commands and socket work beyond the
// locks-alone windows'.
func writeOwnCommands(b *strings.Builder, results []rateRuns, rounds int) {
	b.WriteString("\nPer window beyond the locks-alone windows' (`INFO commandstats`: calls, execution time; `INFO stats`: " +
		"socket reads and writes Redis processed):\n\n")
	for _, rr := range results {
		alone := rr.runs[1]
		for _, r := range rr.runs[2:] {
			io := r.io.minus(alone.io)
			fmt.Fprintf(b, "- %d ops/s, %s: %d reads, %d writes; %s\n", rr.rate, r.kind.name,
				io.reads/int64(rounds), io.writes/int64(rounds), describeDeltas(minusDeltas(r.commands, alone.commands), 8, rounds))
		}
	}
}
