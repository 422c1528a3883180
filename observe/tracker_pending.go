package observe

import "time"

// pending are the replies the hook has seen and the tracker has not applied yet. A reply is
// recorded under the tracker's lock as a fixed-size copy of its Call, and the tracker applies
// the replies in the order they were recorded, each at its own reply time, in batches: when
// maxPending have gathered, and before anything reads the state or the series (a collection
// of any family observe writes, Tracked, the oldest hold, a DEL's scan). A lock command in a
// real cycle then touches the lock, the buffer and the clock; the map, the entries, the
// histograms and the gauges are touched by the batch, in one go, where one event leaves them
// in the cache for the next. Applied in order with the same times under the same lock, the
// batch gives exactly the state and series that applying each reply at once gave.
type pendingReply struct {
	c   Call
	res result
	end time.Time
}

// maxPending is the batch: 64 replies, 32 lock cycles of a single-key lock.
const maxPending = 64

// record queues c's reply for c.ns, applying the batch when it is full.
func (t *tracker) record(c *Call, res result, end time.Time) {
	t.mu.Lock()
	if t.pending == nil {
		t.pending = make([]pendingReply, 0, maxPending)
	}
	t.pending = append(t.pending, pendingReply{c: *c, res: res, end: end})
	if len(t.pending) == maxPending {
		t.applyPending()
	}
	t.mu.Unlock()
}

// applyPending applies the pending replies in order; the caller holds t.mu.
func (t *tracker) applyPending() {
	for i := range t.pending {
		p := &t.pending[i]
		switch p.c.op {
		case opAcquire:
			t.acquired(&p.c, p.res, p.end)
		case opRefresh:
			t.refreshed(&p.c, p.res, p.end)
		case opRelease:
			t.released(&p.c, p.res, p.end)
		}
	}
	// The keys and names stay referenced by the entries that need them, not by the buffer.
	clear(t.pending)
	t.pending = t.pending[:0]
}

// flush applies the pending replies, for a collection of a family that reads no state.
func (t *tracker) flush() {
	t.mu.Lock()
	t.applyPending()
	t.mu.Unlock()
}
