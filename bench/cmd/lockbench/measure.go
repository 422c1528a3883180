package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sample is one timed run of one variant in one shape.
type sample struct {
	attempts, acquired, errors int64
	wall                       time.Duration
	cpu                        time.Duration // this process's user+system CPU time
	mallocs, bytes             uint64
	firstErr                   error
	// loadedRTT is the median PING round trip through the delay line while the run went on
	// (see probe.go); 0 outside the added-RTT shape.
	loadedRTT time.Duration
}

func (s sample) nsPerAttempt() float64     { return float64(s.wall.Nanoseconds()) / float64(s.attempts) }
func (s sample) cpuNsPerAttempt() float64  { return float64(s.cpu.Nanoseconds()) / float64(s.attempts) }
func (s sample) allocsPerAttempt() float64 { return float64(s.mallocs) / float64(s.attempts) }
func (s sample) bytesPerAttempt() float64  { return float64(s.bytes) / float64(s.attempts) }
func (s sample) attemptsPerSec() float64   { return float64(s.attempts) / s.wall.Seconds() }
func (s sample) cyclesPerSec() float64     { return float64(s.acquired) / s.wall.Seconds() }
func (s sample) loadedRTTNs() float64      { return float64(s.loadedRTT.Nanoseconds()) }

// run drives goroutines workers (each bound to keys[i]) for d and measures wall time, process
// CPU time and heap allocations over exactly that window. The workers are built before the
// clock starts; the stop flag is read once per attempt.
func run(ctx context.Context, v variant, keys []string, d time.Duration) sample {
	var c crew
	c.launch(ctx, bindWorkers(v, keys))
	before := readUsageAtStart()
	timer := time.AfterFunc(d, func() { c.stop.Store(true) })
	c.start.Done()
	c.done.Wait()
	after := readUsageAtEnd()
	timer.Stop()
	return c.result(before, after)
}

func bindWorkers(v variant, keys []string) []cycleFunc {
	workers := make([]cycleFunc, len(keys))
	for i, k := range keys {
		workers[i] = v.worker(k)
	}
	return workers
}

// crew is the goroutines of one run: they start together, cycle until stop is set and add
// their counts once, when they stop.
type crew struct {
	start, done                  sync.WaitGroup
	stop                         atomic.Bool
	attempts, acquired, failures atomic.Int64
	errOnce                      sync.Once
	firstErr                     error
}

// launch starts one goroutine per worker, each waiting for start.
func (c *crew) launch(ctx context.Context, workers []cycleFunc) {
	c.start.Add(1)
	for _, w := range workers {
		c.done.Go(func() { c.work(ctx, w) })
	}
}

func (c *crew) work(ctx context.Context, w cycleFunc) {
	var n, ok, bad int64
	c.start.Wait()
	for !c.stop.Load() {
		acquired, err := w(ctx)
		n++
		switch {
		case err != nil:
			bad++
			c.errOnce.Do(func() { c.firstErr = err })
		case acquired:
			ok++
		}
	}
	c.attempts.Add(n)
	c.acquired.Add(ok)
	c.failures.Add(bad)
}

func (c *crew) result(before, after usage) sample {
	return sample{
		attempts: c.attempts.Load(), acquired: c.acquired.Load(), errors: c.failures.Load(),
		wall: after.at.Sub(before.at), cpu: after.cpu - before.cpu,
		mallocs: after.mallocs - before.mallocs, bytes: after.bytes - before.bytes,
		firstErr: c.firstErr,
	}
}

// usage is the clock, this process's CPU time and its heap allocation counters at one moment.
type usage struct {
	at             time.Time
	cpu            time.Duration
	mallocs, bytes uint64
}

// readUsageAtStart collects garbage first, then reads the costly counters before the clock, and
// readUsageAtEnd reads the clock first: the window they bound holds the run and little else.
func readUsageAtStart() usage {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	cpu := processCPU()
	return usage{at: time.Now(), cpu: cpu, mallocs: m.Mallocs, bytes: m.TotalAlloc}
}

func readUsageAtEnd() usage {
	at := time.Now()
	cpu := processCPU()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{at: at, cpu: cpu, mallocs: m.Mallocs, bytes: m.TotalAlloc}
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shape is one setting the variants are measured in: how the goroutines pick keys, how many
// there are, and what stands between them and Redis.
type shape struct {
	name     string
	contends bool // every goroutine on one key, else one key each
	// goroutines is the shape's concurrency; 0 means -goroutines.
	goroutines int
	// delayed runs through the delay line (-added-rtt): its variants have clients of their
	// own, dialled through it.
	delayed bool
	// hogs is how many CPU hog processes run beside the shape's runs (-hogs).
	hogs bool
	// all runs every variant; otherwise only the main ones (mainVariant).
	all bool
	// goal is the cycles/s ratio lease (metrics on) must reach against the fastest peer
	// here; 0 for the lone caller, whose goal is set against the single-command baseline.
	goal float64
}

// shapes are the benchmark's settings, in report order: the fastest regime the machine gives
// (loopback, nothing else started by lockbench), a lone caller, added network latency, and
// scarce CPU.
var shapes = []shape{
	{name: "distinct keys", all: true, goal: 1.05},
	{name: "one contended key", contends: true, all: true, goal: 1.05},
	{name: "lone caller", goroutines: 1},
	{name: "distinct keys with added RTT", delayed: true, goal: 1.2},
	{name: "distinct keys beside CPU hogs", hogs: true, goal: 1.3},
	{name: "one contended key beside CPU hogs", contends: true, hogs: true, goal: 1.3},
}

// delayedShape is the index of the added-RTT shape.
const delayedShape = 3

// keysFor returns one key per goroutine: distinct ones, or the same one for all. The prefix
// keeps variants and rounds apart, so a key left by one can never make another's attempt fail.
func keysFor(s shape, prefix string, goroutines int) []string {
	keys := make([]string, goroutines)
	for i := range keys {
		if s.contends {
			keys[i] = prefix + ":contended"
		} else {
			keys[i] = fmt.Sprintf("%s:%d", prefix, i)
		}
	}
	return keys
}
