package lease

import "time"

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
// a neighbouring cap (twice or half the home value, in turn), and the home moves there when
// that window answered commands faster than the home's recent windows. It reads the clock once
// per window, under the sender's mutex the sends take anyway. A window slower than idleWindow
// measured the callers' demand, not the cap, and is not compared.
type sendLimit struct {
	cur  int // the cap now: home, or a probe's value
	home int
	min  int
	max  int

	start time.Time // of the current window; zero before the first send
	cmds  int       // commands answered in the current window
	// homeRate is an average of the home's recent windows' commands per second; 0 while
	// unknown.
	homeRate float64
	windows  int  // windows at home since the last probe
	probeUp  bool // the next probe doubles the cap (else halves it)
}

const (
	windowCmds = 2048
	probeEvery = 4
	idleWindow = 250 * time.Millisecond
)

// minSendLimit is the lowest cap (unless the pool is smaller): with one send at a time, a
// command that just missed a pipeline waits a whole round trip for the next one to leave,
// which cost throughput under CPU load (issue #19) and with added network latency (#26).
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
		// ends without a verdict.
		l.cur, l.homeRate, l.windows = l.home, 0, 0
		return
	}
	if l.cur != l.home {
		// A probe window: move home when it beat the home's recent pace.
		if rate > l.homeRate {
			l.home, l.homeRate = l.cur, rate
		}
		l.cur, l.windows = l.home, 0
		return
	}
	if l.homeRate == 0 {
		l.homeRate = rate
	} else {
		l.homeRate = (l.homeRate + rate) / 2
	}
	l.windows++
	if l.windows >= probeEvery-1 {
		l.cur = l.probe()
	}
}

// probe is the neighbouring cap to try next, alternating up and down where both exist.
func (l *sendLimit) probe() int {
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
