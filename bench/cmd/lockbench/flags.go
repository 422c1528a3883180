package main

import (
	"errors"
	"flag"
	"fmt"
	"time"
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
	addedRTT     time.Duration
	delayConns   int
	hogs         int
	shapes       string
	indexCmp     bool
	index        indexCmpConfig
	lockOwn      bool
	lockOwnRates string
	own          lockOwnConfig
	costs        bool
}

// helperModes are the flags by which lockbench runs as a helper process of its own runs.
type helperModes struct {
	cpuHog             bool
	hogCPU             int
	serveLine          string
	lineOneWay         time.Duration
	serveIndex         string
	serveIndexMode     string
	serveIndexBackstop int
}

// parseFlags reads the command line.
func parseFlags() (config, helperModes) {
	var cfg config
	var h helperModes
	cfg.lockBenchFlags()
	cfg.measurementFlags()
	h.flags()
	flag.Parse()
	return cfg, h
}

// lockBenchFlags are the lock benchmark's flags.
func (cfg *config) lockBenchFlags() {
	flag.IntVar(&cfg.rounds, "rounds", 15, "rounds; every round runs every variant once per shape, in rotated order")
	flag.DurationVar(&cfg.duration, "duration", time.Second, "length of one timed run")
	flag.IntVar(&cfg.goroutines, "goroutines", 16, "concurrent goroutines (and redis-benchmark clients)")
	flag.IntVar(&cfg.ceilingN, "ceiling-requests", 100_000, "redis-benchmark requests per ceiling command")
	flag.StringVar(&cfg.out, "out", "", "write the Markdown results here (default: stdout)")
	flag.StringVar(&cfg.root, "root", "..", "the lockwatch module root, for the exporter benchmark")
	flag.BoolVar(&cfg.scrape, "scrape", true, "also run the exporter's scrape benchmark (collectors.BenchmarkScrape)")
	flag.StringVar(&cfg.scrapeTime, "scrape-benchtime", "3x", "-benchtime of the scrape benchmark")
	flag.StringVar(&cfg.only, "only", "", "comma-separated variant names to run (default: all); for profiling")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the lock runs here")
	flag.StringVar(&cfg.reproduceCmd, "reproduce", "make bench", "the reproduce command printed in the results")
	flag.DurationVar(&cfg.addedRTT, "added-rtt", 500*time.Microsecond, "round trip the delay line adds in the added-RTT shape (0: skip the shape)")
	flag.IntVar(&cfg.delayConns, "added-rtt-goroutines", 64, "concurrent goroutines of the added-RTT shape")
	flag.StringVar(&cfg.shapes, "shapes", "", "comma-separated shape names to run (default: all), e.g. -shapes 'lone caller,distinct keys with added RTT'")
	flag.IntVar(&cfg.hogs, "hogs", 2, "CPU hog processes beside the loaded shapes (0: skip them)")
	flag.BoolVar(&cfg.costs, "costs", false, "print what each run cost per attempt: Redis and client CPU, context switches, system calls, goroutine schedules, and how lease's commands left (see costs.go)")
}

// measurementFlags are the flags of the measurements run instead of the lock benchmark.
func (cfg *config) measurementFlags() {
	flag.BoolVar(&cfg.exporterCmp, "exporter-comparison", false, "compare lock-exporter with redis_exporter --count-keys on a mixed keyspace instead, and exit")
	flag.IntVar(&cfg.cmpRounds, "comparison-rounds", 5, "interleaved rounds per keyspace size of the exporter comparison")
	flag.StringVar(&cfg.cmpSizes, "comparison-sizes", "100000,1000000", "lock key counts of the exporter comparison (as many other keys are added)")
	flag.BoolVar(&cfg.indexCmp, "index-comparison", false, "measure Redis CPU per scrape interval on a big shared keyspace for the index, the walk, redis_exporter --count-keys and no exporter, and exit")
	flag.IntVar(&cfg.index.otherKeys, "index-other-keys", 10_000_000, "other keys of the index comparison (DEBUG POPULATE)")
	flag.IntVar(&cfg.index.locks, "index-locks", 10_000, "lock keys of the index comparison")
	flag.IntVar(&cfg.index.intervals, "index-intervals", 3, "scrape intervals measured per mode")
	flag.DurationVar(&cfg.index.interval, "index-interval", 30*time.Second, "scrape interval of the index comparison")
	flag.IntVar(&cfg.index.otherWrites, "index-other-writes", 10_000, "writes a second of other keys (SETs in pipelines of 100) while the cost of keyspace notifications being on is measured")
	flag.BoolVar(&cfg.lockOwn, "lock-own-cost", false, "measure the index's Redis CPU on each feed against a lock client's own at -lock-own-rates, on the index comparison's keyspace, and exit")
	flag.StringVar(&cfg.lockOwnRates, "lock-own-rates", "100,1000", "lock operations a second of the -lock-own-cost runs")
	flag.IntVar(&cfg.own.rounds, "lock-own-rounds", 3, "rounds per rate of -lock-own-cost; each has an idle, a locks-alone and, per feed, an attached window walking and one resting")
	flag.DurationVar(&cfg.own.window, "lock-own-window", 30*time.Second, "window of -lock-own-cost: one scrape interval")
	flag.StringVar(&cfg.own.before, "lock-own-before", "", "a lockbench built against the collectors to compare with (another commit's); -lock-own-cost then measures its index too, walking")
}

func (h *helperModes) flags() {
	flag.StringVar(&h.serveLine, "delay-line-serve", "", "internal: serve a delay line to this Redis address")
	flag.DurationVar(&h.lineOneWay, "delay-line-one-way", 0, "internal: the delay line's one-way delay")
	flag.BoolVar(&h.cpuHog, "cpu-hog", false, "internal: spin on one core until stdin closes")
	flag.IntVar(&h.hogCPU, "cpu-hog-cpu", -1, "internal: the CPU a -cpu-hog spins on (negative: any)")
	flag.StringVar(&h.serveIndex, "serve-index", "", "internal: serve an index of this Redis address to -lock-own-cost over stdin and stdout")
	flag.StringVar(&h.serveIndexMode, "serve-index-mode", "", "internal: the index variant -serve-index serves")
	flag.IntVar(&h.serveIndexBackstop, "serve-index-backstop", -1, "internal: the backstop pace of -serve-index's index (negative: none)")
}

// check reports settings no run can use.
func (cfg config) check() error {
	switch {
	case flag.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", flag.Arg(0))
	case cfg.rounds < 1 || cfg.goroutines < 1 || cfg.duration <= 0 || cfg.ceilingN < 1 || cfg.delayConns < 1:
		return errors.New("-rounds, -goroutines, -duration, -ceiling-requests and -added-rtt-goroutines must be positive")
	case cfg.addedRTT < 0 || cfg.hogs < 0:
		return errors.New("-added-rtt and -hogs must not be negative")
	}
	return nil
}
