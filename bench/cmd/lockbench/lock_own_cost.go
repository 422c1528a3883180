package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// The exporter's cost against the locks' own (-lock-own-cost): on one server with the index
// comparison's keyspace, windows of a lock client's traffic (lockTraffic, paced) alone, with an
// index attached on each feed (its backstop walking at the default pace all the time, one scrape
// at the window's end), and idle windows; in rotated order, several rounds per rate. What the
// locks cost Redis is the median locks-alone window less the median idle one; what the exporter
// costs is the median attached window less the median locks-alone one. The index's build is
// set-up before its window, not in it.

// lockOwnConfig is the shape of a -lock-own-cost run.
type lockOwnConfig struct {
	rates  []int
	rounds int
	window time.Duration
}

// The window kinds of a round, each an intervalRun mode; the attached ones are indexVariants'.
const (
	ownIdle  = "idle"
	ownLocks = "locks alone"
)

// noBackstop marks a window kind whose index has no backstop walk, which tells the walk's share
// of the exporter's cost.
const noBackstop = ", no backstop"

// ownKinds are the window kinds of a round: idle, the locks alone, the locks with each feed's
// index (without the holder grant, as the documented ACL has it), and with tracking's less its
// backstop walk.
var ownKinds = []string{ownIdle, ownLocks, indexVariants[0].mode, indexVariants[2].mode, indexVariants[0].mode + noBackstop}

// rateRuns is one rate's windows, per kind.
type rateRuns struct {
	rate int
	runs []intervalRun // in ownKinds' order
}

// runLockOwnCost measures every rate in turn on one server.
func runLockOwnCost(ctx context.Context, ic indexCmpConfig, oc lockOwnConfig, progress io.Writer) ([]rateRuns, string, error) {
	srv, err := redisproc.Start(ctx, redisproc.Config{Args: []string{"--enable-debug-command", "yes"}})
	if err != nil {
		return nil, "", err
	}
	defer srv.Stop()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 10 * time.Minute})
	defer admin.Close()
	if err := admin.Do(ctx, "DEBUG", "POPULATE", ic.otherKeys, "cache", 32).Err(); err != nil {
		return nil, "", fmt.Errorf("DEBUG POPULATE: %w", err)
	}
	churn := &lockChurn{c: admin, rng: rand.New(rand.NewPCG(1, 23)), live: map[string]bool{}}
	if err := churn.seed(ctx, ic.locks); err != nil {
		return nil, "", err
	}
	traffic := newLockTraffic(redis.NewClient(&redis.Options{Addr: srv.Addr()}), 16)
	defer traffic.c.Close()
	var out []rateRuns
	for _, rate := range oc.rates {
		rr, err := measureRate(ctx, srv.Addr(), admin, traffic, rate, oc, progress)
		if err != nil {
			return nil, "", fmt.Errorf("%d lock operations/s: %w", rate, err)
		}
		out = append(out, rr)
	}
	return out, redisVersion(ctx, srv.Addr()), nil
}

func measureRate(ctx context.Context, addr string, admin *redis.Client, traffic *lockTraffic, rate int, oc lockOwnConfig, progress io.Writer) (rateRuns, error) {
	rr := rateRuns{rate: rate, runs: make([]intervalRun, len(ownKinds))}
	for i, kind := range ownKinds {
		rr.runs[i].mode = kind
	}
	for round := range oc.rounds {
		for i := range ownKinds {
			r := &rr.runs[(i+round)%len(ownKinds)]
			cpu, cmds, err := ownWindow(ctx, addr, admin, traffic, r.mode, rate, oc.window)
			if err != nil {
				return rr, fmt.Errorf("%s: %w", r.mode, err)
			}
			r.cpu = append(r.cpu, cpu)
			r.commands = addDeltas(r.commands, cmds)
			fmt.Fprintf(progress, "  %d ops/s, %s, round %d: Redis CPU %v over %v\n", rate, r.mode, round+1,
				cpu.Round(time.Millisecond), oc.window)
		}
	}
	return rr, nil
}

// ownWindow measures one window of kind: Redis CPU and the commands run.
func ownWindow(ctx context.Context, addr string, admin *redis.Client, traffic *lockTraffic, kind string, rate int, window time.Duration) (time.Duration, []cmdDelta, error) {
	var index *attachedIndex
	pace := collectors.DefaultBackstopKeysPerSecond
	if mode, ok := strings.CutSuffix(kind, noBackstop); ok {
		kind, pace = mode, -1
	}
	if v, ok := variantOf(kind); ok {
		var err error
		if index, err = attachIndex(ctx, addr, admin, v, pace); err != nil {
			return 0, nil, err
		}
		defer index.close(ctx, admin)
	}
	stats0, err := readCmdStats(ctx, admin)
	if err != nil {
		return 0, nil, err
	}
	cpu, err := spanCPU(ctx, admin, func() error {
		if kind == ownIdle {
			time.Sleep(window)
			return nil
		}
		if err := paced(ctx, rate, window, traffic.op); err != nil {
			return err
		}
		if index != nil {
			return index.scrape(ctx, -1)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	stats1, err := readCmdStats(ctx, admin)
	return cpu, stats1.since(stats0), err
}

// addDeltas sums b into a by command.
func addDeltas(a, b []cmdDelta) []cmdDelta {
	for _, d := range b {
		found := false
		for i := range a {
			if a[i].name == d.name {
				a[i].calls, a[i].exec, found = a[i].calls+d.calls, a[i].exec+d.exec, true
			}
		}
		if !found {
			a = append(a, d)
		}
	}
	return a
}

// lockOwnMarkdown renders a -lock-own-cost run.
func lockOwnMarkdown(results []rateRuns, ic indexCmpConfig, oc lockOwnConfig, redisVer string) string {
	var b strings.Builder
	b.WriteString("\n## The exporter against the locks' own\n\n")
	fmt.Fprintf(&b, "One redis-server %s with %s other keys and %s lock keys; a lock client's traffic (redis-py's `Lock`: "+
		"`SET NX PX`, its reacquire script, its release script, a third each, one command per round trip) at each rate, "+
		"in %v windows: idle, the locks alone, and the locks with lock-exporter's index attached on each feed as the "+
		"documented ACL user (no holder grant; backstop walking at the default %d keys/s throughout, or none where the feed says so; one scrape per window); "+
		"rotated order, medians of %d rounds (`go run ./cmd/lockbench -lock-own-cost`, in `bench/`).\n\n",
		redisVer, humanCount(ic.otherKeys), humanCount(ic.locks), oc.window, collectors.DefaultBackstopKeysPerSecond, oc.rounds)
	b.WriteString("| lock operations/s | the locks' own Redis CPU per window | feed | the exporter's Redis CPU per window | ÷ the locks' own |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, rr := range results {
		idle, alone := medianDuration(rr.runs[0].cpu), medianDuration(rr.runs[1].cpu)
		own := alone - idle
		for _, r := range rr.runs[2:] {
			exp := medianDuration(r.cpu) - alone
			fmt.Fprintf(&b, "| %d | %.3f s | %s | %.3f s | **%.2f×** |\n", rr.rate, own.Seconds(),
				strings.TrimPrefix(r.mode, "index, "), exp.Seconds(), exp.Seconds()/own.Seconds())
		}
	}
	b.WriteString("\nCommands per window beyond the locks-alone windows' (`INFO commandstats`: calls, execution time):\n\n")
	for _, rr := range results {
		for _, r := range rr.runs[2:] {
			fmt.Fprintf(&b, "- %d ops/s, %s: %s\n", rr.rate, strings.TrimPrefix(r.mode, "index, "),
				describeDeltas(minusDeltas(r.commands, rr.runs[1].commands), 8, oc.rounds))
		}
	}
	return b.String()
}

// minusDeltas is a less base, by command, the commands whose calls grew, costliest first.
func minusDeltas(a, base []cmdDelta) []cmdDelta {
	var out []cmdDelta
	for _, d := range a {
		for _, o := range base {
			if o.name == d.name {
				d.calls, d.exec = d.calls-o.calls, d.exec-o.exec
			}
		}
		if d.calls > 0 {
			out = append(out, d)
		}
	}
	sortDeltas(out)
	return out
}
