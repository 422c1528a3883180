package otel_test

import (
	"time"

	"github.com/lockwatch/lockwatch/observe"
)

// Scripts in the shapes lock libraries use, written for these tests (as observe's own tests
// write them).
const (
	testRelease = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
	testRefresh = "local v = redis.call(\"get\", KEYS[1])\nif v == ARGV[1] then return redis.call(\"pexpire\", KEYS[1], ARGV[2]) end\nreturn 0"
)

// fakeClock is a manual clock for the Observer's time-based rules, set through
// internal/testhooks.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// do runs one command through Begin/Done with the given reply and returns whether it was
// recognised; the clock advances by rtt between the two, as a round trip would.
func do(o *observe.Observer, clock *fakeClock, rtt time.Duration, r observe.Reply, args ...string) bool {
	c := o.Begin(observe.StringArgs(args))
	clock.advance(rtt)
	c.Done(r)
	return c != nil
}

var (
	ok       = observe.Reply{}
	nilReply = observe.Reply{Nil: true}
	one      = observe.Reply{Int: 1, IsInt: true}
)
