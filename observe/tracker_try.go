package observe

import (
	"math/bits"
	"time"
)

// try is one acquire try of a value on a Redlock: redsync sends SET NX with the value to every
// server of the lock at once and holds the lock only when more than half of them took it;
// otherwise it releases the value on every server and, after a delay, tries again with the
// same value. A server that took the value in a try that missed its quorum is no acquisition
// and its clean-up release no release: the try's outcome is the quorum's.
//
// How many servers make the quorum is learned from the traffic: the servers (hooks) a value
// reached in one complete try form a group (tracker.groups). Once a server's group is known,
// a try on it is decided as soon as its outcome is certain — acquired at the reply that makes
// a majority of the group ok, failed at the one after which a majority cannot be reached —
// and later replies of the same try only add parts (ok) or are not counted. While it is not
// known (the first try through a server of an Observer with several hooks), the try is decided
// when it is complete: at the value's next command (redsync waits for every server's reply
// before it goes on, with a clean-up release, a renew, an unlock or the next try), or
// GiveUpAfter after its last reply when none follows; its servers are then the group.
type try struct {
	answered, ok, busy, failed uint64    // server bits (serverBit) that answered, by outcome
	start                      time.Time // start of the try's earliest call
	last                       time.Time // reply of its latest call
	okStart, okEnd             time.Time // start of the earliest and reply of the latest ok call
	decided                    bool
}

// pending reports whether t is a try not decided yet; a nil try is none.
func (t *try) pending() bool { return t != nil && !t.decided }

// groupSize is the number of servers a try through server makes its quorum of: 1 for a
// single server (the only hook of the Observer, or Begin's callers, which pass no server), the
// learned group's size, or 0 when the group is not known yet.
func (t *tracker) groupSize(server uint32) int {
	if server == 0 || t.hooks == nil || t.hooks.Load() <= 1 {
		return 1
	}
	return bits.OnesCount64(t.groups[server%64])
}

// tryReply adds an acquire reply to the value's current try on a group of n servers (0: not
// known yet) and decides the try when its outcome is certain.
func (t *tracker) tryReply(c *Call, id lockID, e *entry, res result, end time.Time, n int) {
	bit := serverBit(c.server)
	if e.try == nil {
		// Only a Redlock's values have one: a single server's entries stay small.
		e.try = new(try)
	}
	tr := e.try
	if tr.answered == 0 || c.start.Before(tr.start) {
		tr.start = c.start
	}
	tr.answered |= bit
	tr.last = end
	switch res {
	case resultSuccess:
		tr.ok |= bit
		if tr.okStart.IsZero() || c.start.Before(tr.okStart) {
			tr.okStart = c.start
		}
		if end.After(tr.okEnd) {
			tr.okEnd = end
		}
		if !tr.decided || e.held() {
			// A part of the lock once (or if) the try wins; a minority's key that a lost
			// try's clean-up removes is none.
			t.addParts(e, c, end)
			if e.held() && end.After(e.roundEnd) {
				e.roundEnd = end
			}
		}
	case resultRejected:
		tr.busy |= bit
	default:
		tr.failed |= bit
	}
	if !tr.decided && n > 0 {
		t.decideTry(id, e, n, false)
	}
}

// decideTry settles the try on a group of n servers when its outcome is certain, or by the
// replies it has when final (a complete try whose group was not known: n is then every server
// that answered, so it always settles).
func (t *tracker) decideTry(id lockID, e *entry, n int, final bool) {
	tr := e.try
	quorum := n/2 + 1
	ok := bits.OnesCount64(tr.ok)
	lost := bits.OnesCount64(tr.busy | tr.failed)
	switch {
	case ok >= quorum:
		tr.decided = true
		t.tryWon(id, e)
	case lost > n-quorum || final:
		tr.decided = true
		t.tryLost(id, e, bits.OnesCount64(tr.failed) > n-quorum)
	}
}

// tryWon ends the value's wait and starts the hold at the try's earliest ok call.
func (t *tracker) tryWon(id lockID, e *entry) {
	m := id.ns.m
	tr := e.try
	since := tr.start
	if e.waiting() {
		since = e.waitingSince
		t.endWait(id.ns, e)
	}
	m.WaitAcquired.Observe(tr.okEnd.Sub(since).Seconds())
	if e.held() {
		return
	}
	e.heldSince, e.roundEnd, e.endedAt = tr.okStart, tr.okEnd, time.Time{}
	t.recent.forget(id)
	m.Held.Inc()
}

// tryLost drops the minority's parts and counts the try as a busy attempt of the value's wait,
// or, when errors alone made the quorum unreachable, ends the wait as an error (as a single
// server's failed attempt does). The value is remembered for a while then (see released), so
// that the clean-up release after the try is not counted.
func (t *tracker) tryLost(id lockID, e *entry, byErrors bool) {
	tr := e.try
	if !e.held() {
		e.parts, e.servers = e.parts[:0], 0
	}
	if !byErrors {
		t.attemptFailed(id.ns, e, tr.start, tr.last)
		return
	}
	since := tr.start
	if e.waiting() {
		since = e.waitingSince
		t.endWait(id.ns, e)
	}
	id.ns.m.WaitError.Observe(tr.last.Sub(since).Seconds())
	if !e.held() {
		e.endedAt = tr.last
	}
}

// completeTry closes the value's try: a pending one is decided on the servers that answered,
// which become the group of each of them (a group only grows, so a server first seen alone
// and later in a Redlock joins it).
func (t *tracker) completeTry(id lockID, e *entry) {
	tr := e.try
	if tr == nil {
		return
	}
	for b := tr.answered; b != 0; b &= b - 1 {
		t.groups[bits.TrailingZeros64(b)] |= tr.answered
	}
	if !tr.decided {
		t.decideTry(id, e, bits.OnesCount64(tr.answered), true)
	}
	e.try = nil
}
