package observe

import (
	"strconv"
	"testing"
	"time"
)

// rueidislock extends each key of a lock on its own goroutine and timer, and calls the extends
// in flight off when the lock is let go; an extend the server had already answered can still
// reach the hook after another key's delete (the goroutines' Done calls race). The order below
// is the one TestRueidislockCycles (peertest) recorded on a loaded machine: the late extends of
// keys 2 and 0 answer between the deletes. They are stragglers of the renew round the release
// closed: the lock is released once, not once at its first delete and again by the rest.
func TestRenewAnsweringDuringReleaseIsNoRound(t *testing.T) {
	o, reg, clock := newTestObserver(t, Options{Namespaces: []Namespace{{Name: "jobs", Pattern: "*jobs:*"}}})
	ms := time.Millisecond
	pxat := func() string { return strconv.FormatInt(clock.now().Add(5*time.Second).UnixMilli(), 10) }
	key := func(part int) string { return "lw:" + strconv.Itoa(part) + ":jobs:cycle" }
	acquire := func(part int) []string {
		return []string{"EVALSHA", "3875d208d9e377969d2022550302cc83ad17b584", "1", key(part), "v", pxat()}
	}
	extend := func(part int) []string {
		return []string{"EVALSHA", "852ba6ec6104340ced36643283c856d4698569e4", "1", key(part), "v", pxat()}
	}
	release := func(part int) []string {
		return []string{"EVALSHA", "9eb62214c9af87ae5f9a9f12bb4520281c0d2ae1", "1", key(part), "v", pxat()}
	}
	for part := range 3 {
		do(o, clock, ms, ok, acquire(part)...)
	}
	clock.advance(50 * ms)
	// Each key's extend is sent when the previous one answers (the extends' replies invalidate
	// the keys, and rueidislock extends again on the invalidation), so each has one in flight.
	ext := [3]*Call{}
	send := func(part int) { ext[part] = o.BeginStrings(extend(part)) }
	answer := func(part int) { clock.advance(ms / 10); ext[part].Done(one) }
	send(0)
	send(1)
	send(2)
	for _, part := range []int{0, 2, 1, 0, 2, 1, 0} {
		answer(part)
		send(part)
	}
	// The holder lets go: the extends in flight are called off, but key 1's has already
	// been answered, and the others' answers reach the hook between the deletes.
	clock.advance(ms)
	answer(1)
	del1 := o.BeginStrings(release(1))
	clock.advance(4 * ms)
	del1.Done(one)
	answer(2)
	del2 := o.BeginStrings(release(2))
	answer(0)
	del0 := o.BeginStrings(release(0))
	clock.advance(19 * ms)
	del2.Done(one)
	del0.Done(one)

	checkJobs(t, reg,
		jobsValue{"lock_releases_total", "ok", 1},
		jobsValue{"lock_held", "", 0},
		jobsValue{"lock_renewals_total", "not_owned", 0},
		jobsValue{"lock_renewals_total", "failed", 0},
	)
	if n, _ := histogram(t, reg, "lock_held_seconds", "jobs", ""); n != 1 {
		t.Errorf("lock_held_seconds count = %d, want 1", n)
	}
	if n := o.Tracked(); n != 0 {
		t.Errorf("%d locks tracked after the release, want 0", n)
	}
}
