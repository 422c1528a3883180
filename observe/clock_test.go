package observe

import (
	"testing"
	"time"
)

// The hook's clock reads as time.Now does: never backwards, within a hair of the wall clock,
// and carrying a monotonic reading, so that waits and holds are differences of monotonic
// readings.
func TestClockReadsAsTimeNow(t *testing.T) {
	c := newClock()
	prev := c.now()
	for range 1000 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		if got.Before(prev) {
			t.Fatalf("clock went back from %v to %v", prev, got)
		}
		if got.Before(before) || got.After(after) {
			t.Fatalf("clock read %v, outside [%v, %v]", got, before, after)
		}
		if got.Round(0) == got {
			t.Fatal("clock reading has no monotonic reading")
		}
		// Round(0) drops the monotonic readings: the wall readings compared.
		if d := got.Round(0).Sub(before.Round(0)); d < -10*time.Millisecond || d > 10*time.Millisecond+after.Sub(before) {
			t.Fatalf("clock's wall reading %v is %v from time.Now's", got.Round(0), d)
		}
		prev = got
	}
}

// Once anchorEvery has passed since the anchor was taken, a reading takes a new anchor from
// the wall clock, so that a step of the system's clock reaches absolute expiries within
// anchorEvery.
func TestClockAnchorsAgain(t *testing.T) {
	c := newClock()
	old := time.Now().Add(-2 * anchorEvery)
	c.anchor.Store(&old)
	before := time.Now()
	got := c.now()
	if a := c.anchor.Load(); a == &old || a.Before(before) {
		t.Fatalf("anchor %v not taken again (read at %v)", *a, before)
	}
	if got.Before(before) {
		t.Fatalf("clock read %v before %v", got, before)
	}
}
