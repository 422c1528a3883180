package observe

import (
	"sync/atomic"
	"time"
)

// clock is the Observer's time source on the hook path. time.Now reads two clocks (wall and
// monotonic); on a virtual machine each read costs a visible share of a lock command's client
// CPU, and a lock cycle takes three readings. A clock reading reads the monotonic clock alone
// and adds its distance to an anchor taken by time.Now: durations (waits, holds) are exactly
// what time.Now would give, and the wall reading, which only absolute expiries (PXAT, EXAT)
// are compared with, follows a step of the system's clock within anchorEvery.
type clock struct {
	anchor atomic.Pointer[time.Time]
}

// anchorEvery is how often the anchor is taken again from the wall clock.
const anchorEvery = time.Second

func newClock() *clock {
	c := &clock{}
	c.start()
	return c
}

// start takes the first anchor.
func (c *clock) start() {
	t := time.Now()
	c.anchor.Store(&t)
}

func (c *clock) now() time.Time {
	a := c.anchor.Load()
	if d := time.Since(*a); d < anchorEvery {
		return a.Add(d)
	}
	t := time.Now()
	c.anchor.Store(&t)
	return t
}
