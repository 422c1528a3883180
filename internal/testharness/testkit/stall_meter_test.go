package testkit

import (
	"runtime"
	"testing"
	"time"
)

// With a single P busy for 50ms, the meter's goroutine runs only once the busy loop is
// preempted (about 10ms in), so the meter sees a stall of milliseconds, and Slack grows with it.
func TestStallMeterSeesAStall(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	m := StartStallMeter()
	defer m.Stop()
	time.Sleep(10 * stallStep) // let the meter take a few readings
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	time.Sleep(10 * stallStep)
	m.Stop()
	m.Stop() // idempotent
	if w := m.Worst(); w < time.Millisecond {
		t.Fatalf("worst stall %s while the only P was busy for 50ms, want at least 1ms", w)
	}
	if base := 10 * time.Millisecond; m.Slack(base) < base+4*m.Worst() {
		t.Fatalf("Slack(%s) = %s, want base + 4 × worst stall (%s)", base, m.Slack(base), m.Worst())
	}
}
