package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// The exporter's cost against the locks' own (-lock-own-cost): on one server with the index
// comparison's keyspace, windows of a lock client's traffic (lockTraffic, paced) alone, with an
// index attached (in a process of its own, index_process.go) and idle windows; in rotated
// order, several rounds per rate. What the locks cost Redis is the median locks-alone window
// less the median idle one; what the exporter costs is the median attached window less the
// median locks-alone one. The index's build is set-up before its window, not in it.
//
// The backstop walk reads the keyspace at its pace for as long as a walk takes and then rests
// collectors.DefaultBackstopEvery, so each feed's index has a window with the walk going
// throughout and one with no walk (a rest); the exporter's share over a whole cycle weighs the
// two by the time a walk of this keyspace takes and the rest (ownCycle).

// lockOwnConfig is the shape of a -lock-own-cost run.
type lockOwnConfig struct {
	rates  []int
	rounds int
	window time.Duration
	before string // a lockbench built against the collectors to compare with; "" for none
	self   string // this lockbench, which serves the indexes of this checkout
}

// ownKind is one kind of window of a round.
type ownKind struct {
	name    string
	index   *indexVariant // nil: no index attached
	traffic bool          // the lock traffic runs
	walking bool          // the index's backstop walk goes on throughout the window
	before  bool          // the index is -lock-own-before's
}

// The kinds without an index.
const (
	ownIdle  = "idle"
	ownLocks = "locks alone"
)

// ownKinds are the window kinds of a round: idle, the locks alone, and the locks with each
// feed's index (without the holder grant, as the documented ACL has it) walking and resting,
// and, with a before binary, that binary's index walking.
func ownKinds(before bool) []ownKind {
	kinds := []ownKind{{name: ownIdle}, {name: ownLocks, traffic: true}}
	for _, v := range []*indexVariant{&indexVariants[0], &indexVariants[2]} {
		feed := string(v.feed)
		kinds = append(kinds,
			ownKind{name: feed + ", walking", index: v, traffic: true, walking: true},
			ownKind{name: feed + ", resting", index: v, traffic: true})
		if before {
			kinds = append(kinds, ownKind{name: feed + ", walking, before", index: v, traffic: true, walking: true, before: true})
		}
	}
	return kinds
}

// ownRun is one kind's windows at one rate.
type ownRun struct {
	kind     ownKind
	cpu      []time.Duration
	commands []cmdDelta // INFO commandstats over all its windows
	io       ioCounts   // INFO stats over all its windows
}

// rateRuns is one rate's windows, per kind.
type rateRuns struct {
	rate int
	runs []ownRun // in ownKinds' order
}

// ownBench is a -lock-own-cost run's server, its clients and its shape.
type ownBench struct {
	oc      lockOwnConfig
	addr    string
	admin   *redis.Client
	traffic *lockTraffic
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
	b := &ownBench{oc: oc, addr: srv.Addr(), admin: admin,
		traffic: newLockTraffic(redis.NewClient(&redis.Options{Addr: srv.Addr()}), 16)}
	defer b.traffic.c.Close()
	var out []rateRuns
	for _, rate := range oc.rates {
		rr, err := b.measureRate(ctx, rate, progress)
		if err != nil {
			return nil, "", fmt.Errorf("%d lock operations/s: %w", rate, err)
		}
		out = append(out, rr)
	}
	return out, redisVersion(ctx, srv.Addr()), nil
}

func (b *ownBench) measureRate(ctx context.Context, rate int, progress io.Writer) (rateRuns, error) {
	kinds := ownKinds(b.oc.before != "")
	rr := rateRuns{rate: rate, runs: make([]ownRun, len(kinds))}
	for i, k := range kinds {
		rr.runs[i].kind = k
	}
	for round := range b.oc.rounds {
		for i := range kinds {
			r := &rr.runs[(i+round)%len(kinds)]
			cpu, cmds, io, err := b.window(ctx, r.kind, rate)
			if err != nil {
				return rr, fmt.Errorf("%s: %w", r.kind.name, err)
			}
			r.cpu = append(r.cpu, cpu)
			r.commands = addDeltas(r.commands, cmds)
			r.io = r.io.plus(io)
			fmt.Fprintf(progress, "  %d ops/s, %s, round %d: Redis CPU %v over %v\n", rate, r.kind.name, round+1,
				cpu.Round(time.Millisecond), b.oc.window)
		}
	}
	return rr, nil
}

// window measures one window of kind: Redis CPU, the commands run and the socket reads and
// writes.
func (b *ownBench) window(ctx context.Context, k ownKind, rate int) (time.Duration, []cmdDelta, ioCounts, error) {
	if k.index != nil {
		index, err := b.attach(ctx, k)
		if err != nil {
			return 0, nil, ioCounts{}, err
		}
		defer b.detach(ctx, k, index)
		return b.measure(ctx, k, rate, index)
	}
	return b.measure(ctx, k, rate, nil)
}

// attach readies the server for k's index and starts it in its own process.
func (b *ownBench) attach(ctx context.Context, k ownKind) (*indexProcess, error) {
	if err := k.index.prepare(ctx, b.admin); err != nil {
		return nil, err
	}
	bin, pace := b.oc.self, -1
	if k.before {
		bin = b.oc.before
	}
	if k.walking {
		pace = collectors.DefaultBackstopKeysPerSecond
	}
	p, err := startIndexProcess(bin, b.addr, *k.index, pace)
	if err != nil {
		k.index.release(ctx, b.admin)
	}
	return p, err
}

func (b *ownBench) detach(ctx context.Context, k ownKind, p *indexProcess) {
	p.stop()
	k.index.release(ctx, b.admin)
}

// measure runs one window of k with index (nil: none) attached.
func (b *ownBench) measure(ctx context.Context, k ownKind, rate int, index *indexProcess) (time.Duration, []cmdDelta, ioCounts, error) {
	stats0, err := readCmdStats(ctx, b.admin)
	if err != nil {
		return 0, nil, ioCounts{}, err
	}
	io0, err := readIOCounts(ctx, b.admin)
	if err != nil {
		return 0, nil, ioCounts{}, err
	}
	cpu, err := spanCPU(ctx, b.admin, func() error {
		if !k.traffic {
			time.Sleep(b.oc.window)
			return nil
		}
		if err := paced(ctx, rate, b.oc.window, b.traffic.op); err != nil {
			return err
		}
		if index != nil {
			return index.scrape()
		}
		return nil
	})
	if err != nil {
		return 0, nil, ioCounts{}, err
	}
	io1, err := readIOCounts(ctx, b.admin)
	if err != nil {
		return 0, nil, ioCounts{}, err
	}
	stats1, err := readCmdStats(ctx, b.admin)
	return cpu, cmdsSince(stats1, stats0), io1.minus(io0), err
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
