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
}

func (s sample) nsPerAttempt() float64     { return float64(s.wall.Nanoseconds()) / float64(s.attempts) }
func (s sample) cpuNsPerAttempt() float64  { return float64(s.cpu.Nanoseconds()) / float64(s.attempts) }
func (s sample) allocsPerAttempt() float64 { return float64(s.mallocs) / float64(s.attempts) }
func (s sample) bytesPerAttempt() float64  { return float64(s.bytes) / float64(s.attempts) }
func (s sample) attemptsPerSec() float64   { return float64(s.attempts) / s.wall.Seconds() }
func (s sample) cyclesPerSec() float64     { return float64(s.acquired) / s.wall.Seconds() }

// run drives goroutines workers (each bound to keys[i]) for d and measures wall time, process
// CPU time and heap allocations over exactly that window. The workers are built before the
// clock starts; the stop flag is read once per attempt.
func run(ctx context.Context, v variant, keys []string, d time.Duration) sample {
	workers := make([]cycleFunc, len(keys))
	for i, k := range keys {
		workers[i] = v.worker(k)
	}
	var (
		stop             atomic.Bool
		start            sync.WaitGroup
		done             sync.WaitGroup
		attempts, locked atomic.Int64
		failures         atomic.Int64
		errOnce          sync.Once
		firstErr         error
	)
	start.Add(1)
	for _, w := range workers {
		done.Go(func() {
			var n, ok, bad int64
			start.Wait()
			for !stop.Load() {
				acquired, err := w(ctx)
				n++
				switch {
				case err != nil:
					bad++
					errOnce.Do(func() { firstErr = err })
				case acquired:
					ok++
				}
			}
			attempts.Add(n)
			locked.Add(ok)
			failures.Add(bad)
		})
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	t0 := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	start.Done()
	done.Wait()
	wall := time.Since(t0)
	cpu1 := processCPU()
	runtime.ReadMemStats(&m1)
	timer.Stop()
	return sample{
		attempts: attempts.Load(), acquired: locked.Load(), errors: failures.Load(),
		wall: wall, cpu: cpu1 - cpu0,
		mallocs: m1.Mallocs - m0.Mallocs, bytes: m1.TotalAlloc - m0.TotalAlloc,
		firstErr: firstErr,
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shape is how the benchmark goroutines pick keys.
type shape struct {
	name     string
	contends bool
}

var shapes = []shape{
	{name: "distinct keys"},
	{name: "one contended key", contends: true},
}

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
