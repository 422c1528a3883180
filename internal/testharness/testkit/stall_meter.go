package testkit

import (
	"sync"
	"sync/atomic"
	"time"
)

// stallStep is the StallMeter's sleep: short enough to notice a stall of a few milliseconds,
// long enough to cost nothing measurable.
const stallStep = 2 * time.Millisecond

// StallMeter measures how late this process's timers fire while a test runs: a goroutine
// sleeps stallStep again and again and keeps the largest oversleep. On an idle machine that is
// well under a millisecond; on a starved one (CPU hogs beside the tests, a GC pause) it is the
// scheduling delay every goroutine of the test suffered too. Tests derive the slack of their
// wall-clock bounds from it instead of a fixed margin: Slack(base) grows with the stall the
// test actually saw.
type StallMeter struct {
	stop    chan struct{}
	stopped sync.WaitGroup
	worst   atomic.Int64 // nanoseconds
}

// StartStallMeter starts measuring; call Stop (t.Cleanup(m.Stop) is fine) when done.
func StartStallMeter() *StallMeter {
	m := &StallMeter{stop: make(chan struct{})}
	m.stopped.Add(1)
	go m.run()
	return m
}

func (m *StallMeter) run() {
	defer m.stopped.Done()
	t := time.NewTimer(stallStep)
	defer t.Stop()
	for {
		start := time.Now()
		t.Reset(stallStep)
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if late := time.Since(start) - stallStep; late > time.Duration(m.worst.Load()) {
			m.worst.Store(int64(late))
		}
	}
}

// Worst is the largest stall seen so far.
func (m *StallMeter) Worst() time.Duration { return time.Duration(m.worst.Load()) }

// Slack is the slack a wall-clock bound needs given the stalls seen so far: base (what the
// operation itself may take beyond its nominal time on an idle machine) plus a few times the
// worst stall, since an operation passes through several wake-ups (timer, goroutine, socket),
// each of which can be delayed as long.
func (m *StallMeter) Slack(base time.Duration) time.Duration { return base + 4*m.Worst() }

// Stop ends the measurement; it is safe to call more than once.
func (m *StallMeter) Stop() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	m.stopped.Wait()
}
