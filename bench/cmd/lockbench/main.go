// Command lockbench measures lock + unlock cycles of lockwatch's lease library and its peers
// (bsm/redislock, redsync, rueidislock) against one redis-server it starts, next to the
// redis-benchmark ceiling for the same commands, optionally runs the exporter's scrape
// benchmark, and writes the results as Markdown. `make bench` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

type config struct {
	rounds       int
	duration     time.Duration
	goroutines   int
	ceilingN     int
	out          string
	root         string
	scrape       bool
	scrapeTime   string
	only         string
	cpuProfile   string
	reproduceCmd string
	exporterCmp  bool
	cmpRounds    int
	cmpSizes     string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.rounds, "rounds", 7, "rounds; every round runs every variant once per shape, in rotated order")
	flag.DurationVar(&cfg.duration, "duration", 1500*time.Millisecond, "length of one timed run")
	flag.IntVar(&cfg.goroutines, "goroutines", 16, "concurrent goroutines (and redis-benchmark clients)")
	flag.IntVar(&cfg.ceilingN, "ceiling-requests", 100_000, "redis-benchmark requests per ceiling command")
	flag.StringVar(&cfg.out, "out", "", "write the Markdown results here (default: stdout)")
	flag.StringVar(&cfg.root, "root", "..", "the lockwatch module root, for the exporter benchmark")
	flag.BoolVar(&cfg.scrape, "scrape", true, "also run the exporter's scrape benchmark (collectors.BenchmarkScrape)")
	flag.StringVar(&cfg.scrapeTime, "scrape-benchtime", "3x", "-benchtime of the scrape benchmark")
	flag.StringVar(&cfg.only, "only", "", "comma-separated variant names to run (default: all); for profiling")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the lock runs here")
	flag.StringVar(&cfg.reproduceCmd, "reproduce", "make bench", "the reproduce command printed in the results")
	flag.BoolVar(&cfg.exporterCmp, "exporter-comparison", false, "compare lock-exporter with redis_exporter --count-keys on a mixed keyspace instead, and exit")
	flag.IntVar(&cfg.cmpRounds, "comparison-rounds", 5, "interleaved rounds per keyspace size of the exporter comparison")
	flag.StringVar(&cfg.cmpSizes, "comparison-sizes", "100000,1000000", "lock key counts of the exporter comparison (as many other keys are added)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "lockbench: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if cfg.rounds < 1 || cfg.goroutines < 1 || cfg.duration <= 0 || cfg.ceilingN < 1 {
		fmt.Fprintln(os.Stderr, "lockbench: -rounds, -goroutines, -duration and -ceiling-requests must be positive")
		os.Exit(2)
	}
	if cfg.exporterCmp {
		if err := runComparison(cfg); err != nil {
			fmt.Fprintf(os.Stderr, "lockbench: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := runAll(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "lockbench: %v\n", err)
		os.Exit(1)
	}
}

func runComparison(cfg config) error {
	var sizes []int
	for _, f := range strings.Split(cfg.cmpSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 3 {
			return fmt.Errorf("-comparison-sizes %q: want lock key counts of at least 3", cfg.cmpSizes)
		}
		sizes = append(sizes, n)
	}
	if cfg.cmpRounds < 1 {
		return fmt.Errorf("-comparison-rounds must be positive")
	}
	results, ver, err := runExporterComparison(context.Background(), sizes, cfg.cmpRounds, os.Stderr)
	if err != nil {
		return err
	}
	md := comparisonMarkdown(results, cfg.cmpRounds, ver)
	if cfg.out == "" {
		_, err = os.Stdout.WriteString(md)
		return err
	}
	return os.WriteFile(cfg.out, []byte(md), 0o644)
}

func runAll(cfg config) error {
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Config{})
	if err != nil {
		return err
	}
	defer srv.Stop()

	variants, err := buildVariants(srv.Addr(), cfg.goroutines, cfg.only)
	if err != nil {
		return err
	}
	defer func() {
		for _, v := range variants {
			v.close()
		}
	}()

	local, err := clientOnlyVariants(srv.Addr())
	if err != nil {
		return err
	}
	if cfg.only != "" {
		local = slices.DeleteFunc(local, func(v variant) bool {
			if slices.Contains(strings.Split(cfg.only, ","), v.name) {
				return false
			}
			v.close()
			return true
		})
	}
	defer func() {
		for _, v := range local {
			v.close()
		}
	}()

	rep := newReport(cfg, machineFacts(ctx, srv.Addr()))
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	// Warm-up: dial every pool connection, load scripts, let the runtime settle.
	for _, s := range shapes {
		for _, v := range variants {
			if smp := run(ctx, v, keysFor(s, "warm:"+v.name, cfg.goroutines), 300*time.Millisecond); smp.errors > 0 {
				return fmt.Errorf("%s, %s: warm-up: %d errors, first: %v", v.name, s.name, smp.errors, smp.firstErr)
			}
		}
	}

	for r := range cfg.rounds {
		for i := range local {
			v := local[(i+r)%len(local)]
			smp := run(ctx, v, []string{"local"}, cfg.duration/3)
			if smp.errors > 0 {
				return fmt.Errorf("%s (no network): %d errors, first: %v", v.name, smp.errors, smp.firstErr)
			}
			rep.addLocal(r, v, smp)
		}
		for si, s := range shapes {
			c, err := measureCeiling(ctx, srv.Addr(), srv.Port(), s, cfg.goroutines, cfg.ceilingN)
			if err != nil {
				return err
			}
			rep.addCeiling(si, c)
			// Rotating the order spreads slow phases of a noisy machine over all variants.
			order := slices.Clone(variants)
			rot := (r + si) % len(order)
			order = append(order[rot:], order[:rot]...)
			for _, v := range order {
				prefix := fmt.Sprintf("bench:r%d:%s", r, strings.ReplaceAll(v.name, " ", "_"))
				smp := run(ctx, v, keysFor(s, prefix, cfg.goroutines), cfg.duration)
				if smp.attempts == 0 {
					return fmt.Errorf("%s, %s: no attempt finished", v.name, s.name)
				}
				rep.add(si, v, r, smp)
				fmt.Fprintf(os.Stderr, "round %d/%d  %-18s %-20s %9.0f cycles/s %9.0f attempts/s %7.1f allocs %6d errors\n",
					r+1, cfg.rounds, s.name, v.name, smp.cyclesPerSec(), smp.attemptsPerSec(), smp.allocsPerAttempt(), smp.errors)
			}
		}
	}
	if cfg.scrape {
		fmt.Fprintln(os.Stderr, "running the exporter's scrape benchmark (collectors.BenchmarkScrape)…")
		sr, err := runScrapeBench(cfg.root, cfg.scrapeTime)
		if err != nil {
			return err
		}
		rep.scrape = sr
	}
	md := rep.markdown()
	if cfg.out == "" {
		_, err = os.Stdout.WriteString(md)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(cfg.out, []byte(md), 0o644)
}

func buildVariants(addr string, conns int, only string) ([]variant, error) {
	var all []variant
	add := func(v variant, err error) error {
		if err == nil {
			all = append(all, v)
		}
		return err
	}
	closeAll := func() {
		for _, v := range all {
			v.close()
		}
	}
	for _, mode := range []clientMode{plainClient, autoPipeline} {
		// On the AutoPipeline face lease sends single commands: go-redis does the batching.
		way := leaseDefault
		if mode == autoPipeline {
			way = leaseSingle
		}
		if err := errors.Join(
			add(leaseVariant(addr, conns, true, way, mode)),
			add(leaseVariant(addr, conns, false, way, mode)),
			add(redislockVariant(addr, conns, mode)),
			add(redsyncVariant(addr, conns, mode)),
		); err != nil {
			closeAll()
			return nil, err
		}
	}
	if err := errors.Join(
		add(leaseVariant(addr, conns, true, leaseSingle, plainClient)),
		add(leaseVariant(addr, conns, true, leaseBatching, plainClient)),
		add(leaseVariant(addr, conns, false, leaseBatching, plainClient)),
		add(rueidislockVariant(addr)),
	); err != nil {
		closeAll()
		return nil, err
	}
	if only == "" {
		return all, nil
	}
	var picked []variant
	for _, v := range all {
		if slices.Contains(strings.Split(only, ","), v.name) {
			picked = append(picked, v)
		} else {
			v.close()
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("-only %q names no variant", only)
	}
	return picked, nil
}
