package wire

import (
	"math"
	"time"
)

// sendLimit is the adaptive cap on a Client's sends on the wire at once (single commands and
// pipelines alike). Below the cap a command goes out at once, on its own; at the cap it queues
// and goes out in the next pipeline. Which cap is fastest depends on the machine of the moment,
// and no fixed one wins everywhere (docs/performance.md, "One adaptive send path"): with spare
// CPU on both sides, many commands on the wire at once keep Redis busy, so a high cap (every
// command on its own) is fastest; when the client's CPU is scarce, or round trips are long, a
// few deep pipelines save a write and a read system call per command and a low cap is fastest.
//
// So the cap follows measured throughput. Time is cut into windows of windowCmds answered
// commands; the cap stays at its home value for probeEvery-1 windows, then one window runs at
// a neighbouring cap (twice or half the home value, in turn). It reads the clock once per
// window, under the batcher's mutex the sends take anyway. A window slower than idleWindow
// measured the callers' demand, not the cap, and is not compared.
//
// A window's pace is noisy: on a machine where other processes take the CPU, the client is
// descheduled for whole time slices, and a window that holds one answers slowly whatever the
// cap. A home that moved whenever a probe beat its average would follow that noise (about one
// probe in three on an equal pace with 30% noise) and wander between the lowest and the
// highest cap at random, running windows at the pool size, where more commands go out alone
// and a scarce CPU pays a write and a read for each (TestSendLimitIgnoresNoise). So the home
// moves only on a difference larger than the noise of the moment: a probe counts as faster
// when it beats the home's average by more than the home windows' own typical deviation from
// it, and the home moves there only when the same value, probed again at the next probe, is
// faster a second time. A difference of a few per cent on a quiet machine (whose windows
// hardly vary) still moves it; on a noisy one the cap stays where it is unless the difference
// stands out.
type sendLimit struct {
	cur  int // the cap now: home, or a probe's value
	home int
	min  int
	max  int

	start time.Time // of the current window; zero before the first send
	cmds  int       // commands answered in the current window
	// homeRate is a moving average of the home's recent windows' commands per second, and
	// homeDev of their absolute deviations from it (the noise); homeRate is 0 while unknown.
	homeRate float64
	homeDev  float64
	windows  int  // windows at home since the last probe
	probeUp  bool // the next probe doubles the cap (else halves it)
	// promising is a probed cap that was faster once, to be probed again at the next probe and
	// moved to when it is faster again; 0 when there is none.
	promising int
}

const (
	windowCmds = 2048
	probeEvery = 4
	idleWindow = 250 * time.Millisecond
	// homeWeight is the weight of a new home window in homeRate and homeDev: the average
	// spans the last few windows, enough for the deviation to measure the noise.
	homeWeight = 0.25
)

// minSendLimit is the lowest cap (unless the pool is smaller): with one send at a time, a
// command that just missed a pipeline waits a whole round trip for the next one to leave,
// which costs throughput under CPU load and with added network latency (docs/performance.md).
const minSendLimit = 2

func newSendLimit(initial, limitMax int) sendLimit {
	limitMax = max(1, limitMax)
	limitMin := min(minSendLimit, limitMax)
	initial = min(max(limitMin, initial), limitMax)
	return sendLimit{cur: initial, home: initial, min: limitMin, max: limitMax, probeUp: true}
}

// answered counts n answered commands and reports whether the window is complete (or the first
// has yet to start): then the caller reads the clock and calls endWindow.
func (l *sendLimit) answered(n int) bool {
	l.cmds += n
	return l.cmds >= windowCmds || l.start.IsZero()
}

// endWindow closes the current window at now and picks the cap of the next one.
func (l *sendLimit) endWindow(now time.Time) {
	if l.start.IsZero() {
		l.start, l.cmds = now, 0
		return
	}
	elapsed := now.Sub(l.start)
	rate := float64(l.cmds) / elapsed.Seconds()
	l.start, l.cmds = now, 0
	if elapsed > idleWindow || elapsed <= 0 {
		// The callers' demand set this window's pace: it says nothing about the cap. A probe
		// ends without a verdict, and the pace and noise measured before no longer hold.
		l.cur, l.homeRate, l.homeDev, l.windows, l.promising = l.home, 0, 0, 0, 0
		return
	}
	if l.cur != l.home {
		l.probed(rate)
		return
	}
	l.homeWindow(rate)
	l.windows++
	if l.windows >= probeEvery-1 {
		l.cur = l.probe()
	}
}

// homeWindow adds a home window's pace to the home's average and noise.
func (l *sendLimit) homeWindow(rate float64) {
	if l.homeRate == 0 {
		l.homeRate = rate
		return
	}
	dev := math.Abs(rate - l.homeRate)
	if l.homeDev == 0 {
		l.homeDev = dev
	} else {
		l.homeDev += (dev - l.homeDev) * homeWeight
	}
	l.homeRate += (rate - l.homeRate) * homeWeight
}

// probed judges a probe window's pace: faster than the home by more than the noise twice in a
// row (see sendLimit) moves the home there; once makes the value promising, probed again next.
func (l *sendLimit) probed(rate float64) {
	switch faster := rate > l.homeRate+l.homeDev; {
	case faster && l.promising == l.cur:
		l.home, l.homeRate, l.promising = l.cur, rate, 0
	case faster:
		l.promising = l.cur
	default:
		l.promising = 0
	}
	l.cur, l.windows = l.home, 0
}

// probe is the neighbouring cap to try next: a promising one again, else up and down in turn
// where both exist.
func (l *sendLimit) probe() int {
	if l.promising != 0 {
		return l.promising
	}
	up, down := min(l.home*2, l.max), max(l.home/2, l.min)
	l.probeUp = !l.probeUp
	switch {
	case up == l.home:
		return down
	case down == l.home:
		return up
	case !l.probeUp: // flipped above: the value before the flip chooses
		return up
	}
	return down
}
