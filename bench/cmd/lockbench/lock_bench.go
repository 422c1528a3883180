package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// lockBench is one run of the lock benchmark: the server, the variants and the report the rounds
// fill.
type lockBench struct {
	cfg      config
	srv      *redisproc.Process
	line     *delayLine // nil without the added-RTT shape
	variants []variant  // measured over loopback
	delayed  []variant  // measured through the delay line
	local    []variant  // network removed
	rep      *report
	info     *redis.Client // -costs: reads Redis's counters around each run
}

// runAll runs the lock benchmark on a redis-server of its own: warm-up, the rounds, then the
// exporter's scrape benchmark, and writes the report.
func runAll(cfg config) error {
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Config{})
	if err != nil {
		return err
	}
	defer srv.Stop()
	b := &lockBench{cfg: cfg, srv: srv}
	defer b.close()
	countSends = cfg.costs
	if cfg.costs {
		b.info = redis.NewClient(&redis.Options{Addr: srv.Addr()})
		defer b.info.Close()
	}
	if cfg.addedRTT > 0 && cfg.wants(shapes[delayedShape]) {
		if b.line, err = startDelayLine(srv.Addr(), cfg.addedRTT/2); err != nil {
			return err
		}
	}
	if err := b.build(); err != nil {
		return err
	}
	b.rep = newReport(cfg, machineFacts(ctx, srv.Addr()))
	stopProfile, err := startCPUProfile(cfg.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if err := b.warmUp(ctx); err != nil {
		return err
	}
	for r := range cfg.rounds {
		if err := b.round(ctx, r); err != nil {
			return err
		}
	}
	if err := b.scrapeBench(); err != nil {
		return err
	}
	return writeMarkdown(cfg.out, b.rep.markdown())
}

// build builds the variants -only names (all by default), over loopback, through the delay
// line and without the network.
func (b *lockBench) build() error {
	var err error
	if b.variants, err = buildVariants(b.srv.Addr(), b.cfg.goroutines, b.cfg.only); err != nil {
		return err
	}
	if b.line != nil {
		all, err := buildVariants(b.line.addr, b.cfg.delayConns, b.cfg.only)
		if err != nil {
			return err
		}
		b.delayed = slices.DeleteFunc(all, func(v variant) bool {
			if mainVariant(v.name) {
				return false
			}
			v.close()
			return true
		})
	}
	local, err := clientOnlyVariants(b.srv.Addr())
	if err != nil {
		return err
	}
	b.local = pickOnly(local, b.cfg.only)
	return nil
}

func (b *lockBench) close() {
	closeVariants(b.local)
	closeVariants(b.variants)
	closeVariants(b.delayed)
	if b.line != nil {
		b.line.stop()
	}
}

// skipped reports whether the settings leave shape s out.
func (b *lockBench) skipped(s shape) bool {
	return !b.cfg.wants(s) || (s.delayed && b.line == nil) || (s.hogs && b.cfg.hogs == 0)
}

// wants reports whether -shapes names s (or is empty).
func (cfg config) wants(s shape) bool {
	return cfg.shapes == "" || slices.Contains(strings.Split(cfg.shapes, ","), s.name)
}

// goroutinesFor is shape s's concurrency.
func (b *lockBench) goroutinesFor(s shape) int {
	switch {
	case s.goroutines > 0:
		return s.goroutines
	case s.delayed:
		return b.cfg.delayConns
	}
	return b.cfg.goroutines
}

// variantsFor are the variants shape s runs: through the delay line or not, all or the main
// ones.
func (b *lockBench) variantsFor(s shape) []variant {
	vs := b.variants
	if s.delayed {
		vs = b.delayed
	}
	if s.all {
		return vs
	}
	return slices.DeleteFunc(slices.Clone(vs), func(v variant) bool { return !mainVariant(v.name) })
}

// target is the Redis address and port shape s's clients and ceiling use.
func (b *lockBench) target(s shape) (string, int) {
	if s.delayed {
		return b.line.addr, b.line.port()
	}
	return b.srv.Addr(), b.srv.Port()
}

// startCPUProfile profiles the process into path until the returned stop is called; with no
// path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// warmUp dials every pool connection, loads the scripts and lets the runtime settle. A variant
// none of whose warm-up attempts succeeds stops the benchmark; a few errors (rueidislock times
// out some attempts on a busy machine) are counted in the rounds instead.
func (b *lockBench) warmUp(ctx context.Context) error {
	for _, s := range shapes {
		if b.skipped(s) || s.hogs {
			continue
		}
		for _, v := range b.variantsFor(s) {
			smp := run(ctx, v, keysFor(s, "warm:"+v.name, b.goroutinesFor(s)), 300*time.Millisecond)
			if smp.errors > 0 && smp.errors == smp.attempts {
				return fmt.Errorf("%s, %s: warm-up: %d errors, first: %v", v.name, s.name, smp.errors, smp.firstErr)
			}
		}
	}
	return nil
}

// round runs the network-free variants, then for every shape the ceiling and every variant.
func (b *lockBench) round(ctx context.Context, r int) error {
	if err := b.localRound(ctx, r); err != nil {
		return err
	}
	for si, s := range shapes {
		if b.skipped(s) {
			continue
		}
		if err := b.shapeRound(ctx, r, si); err != nil {
			return err
		}
	}
	return nil
}

// localRound runs every network-free variant once, one goroutine on one key, starting at a
// different variant each round.
func (b *lockBench) localRound(ctx context.Context, r int) error {
	for i := range b.local {
		v := b.local[(i+r)%len(b.local)]
		smp := run(ctx, v, []string{"local"}, b.cfg.duration/3)
		if smp.errors > 0 {
			return fmt.Errorf("%s (no network): %d errors, first: %v", v.name, smp.errors, smp.firstErr)
		}
		b.rep.addLocal(r, v, smp)
	}
	return nil
}

// shapeRound measures the ceiling of one shape, then every variant in it; in a loaded shape
// the hogs run from before the ceiling to after the last variant, and through the delay line
// PINGs check the round trip it adds.
func (b *lockBench) shapeRound(ctx context.Context, r, si int) error {
	s := shapes[si]
	if s.hogs {
		hs, err := startHogs(b.cfg.hogs)
		if err != nil {
			return err
		}
		defer hs.stop()
	}
	addr, port := b.target(s)
	if s.delayed {
		direct, err := pingRTT(ctx, b.srv.Addr(), 200)
		if err != nil {
			return err
		}
		through, err := pingRTT(ctx, addr, 200)
		if err != nil {
			return err
		}
		b.rep.addRTT(direct, through)
	}
	c, err := measureCeiling(ctx, addr, port, s, b.goroutinesFor(s), b.cfg.ceilingN)
	if err != nil {
		return err
	}
	b.rep.addCeiling(si, c, b.goroutinesFor(s))
	// Rotating the order spreads slow phases of a noisy machine over all variants.
	for _, v := range rotated(b.variantsFor(s), r+si) {
		if err := b.measureVariant(ctx, r, si, v); err != nil {
			return err
		}
	}
	return nil
}

func rotated(vs []variant, by int) []variant {
	order := slices.Clone(vs)
	by %= len(order)
	return append(order[by:], order[:by]...)
}

// measureVariant runs one variant on keys of its own for this round and adds the sample to the
// report.
func (b *lockBench) measureVariant(ctx context.Context, r, si int, v variant) error {
	s := shapes[si]
	prefix := fmt.Sprintf("bench:r%d:s%d:%s", r, si, strings.ReplaceAll(v.name, " ", "_"))
	var before costCounters
	if b.info != nil {
		if v.sends != nil {
			v.sends.reset()
		}
		before = readCosts(ctx, b.info)
	}
	if s.delayed {
		if err := b.line.startProbe(); err != nil {
			return err
		}
	}
	smp := run(ctx, v, keysFor(s, prefix, b.goroutinesFor(s)), b.cfg.duration)
	if s.delayed {
		var err error
		if smp.loadedRTT, err = b.line.endProbe(); err != nil {
			return err
		}
	}
	if b.info != nil {
		fmt.Fprintf(os.Stderr, "costs %d/%d  %-33s %-36s %s\n", r+1, b.cfg.rounds, s.name, v.name,
			costLine(before, readCosts(ctx, b.info), smp, v.sends))
	}
	if smp.attempts == 0 {
		return fmt.Errorf("%s, %s: no attempt finished", v.name, s.name)
	}
	b.rep.add(si, v, r, smp)
	fmt.Fprintf(os.Stderr, "round %d/%d  %-33s %-36s %9.0f cycles/s %9.0f attempts/s %7.1f allocs %6d errors\n",
		r+1, b.cfg.rounds, s.name, v.name, smp.cyclesPerSec(), smp.attemptsPerSec(), smp.allocsPerAttempt(), smp.errors)
	return nil
}

// scrapeBench adds the exporter's scrape benchmark to the report when -scrape asks for it.
func (b *lockBench) scrapeBench() error {
	if !b.cfg.scrape {
		return nil
	}
	fmt.Fprintln(os.Stderr, "running the exporter's scrape benchmark (collectors.BenchmarkScrape)…")
	sr, err := runScrapeBench(b.cfg.root, b.cfg.scrapeTime)
	if err != nil {
		return err
	}
	b.rep.scrape = sr
	return nil
}
