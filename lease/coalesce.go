package lease

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// coalescer is the default Client's way to Redis: group commit without goroutines of its own.
// A caller that finds a free send slot sends its own command at once, through go-redis's
// ProcessHook, exactly as a plain go-redis call would: a lone caller pays two uncontended mutex
// operations and nothing else. A caller that finds every slot busy queues its command and
// waits. When a slot frees, its holder hands it to one waiting caller (the leader), which sends
// the queued commands as one go-redis pipeline: one write and one read system call for all of
// them, where each would otherwise wait for a slot and pay its own round trip.
//
// Deadlines: the leader sends only commands whose callers' deadlines are not later than its
// own, on a context bounded by its own deadline, so no leader waits past its deadline for
// another caller's command and no command is cut before its caller's deadline. The slot goes to
// the waiting caller with the latest deadline, which can take the whole queue. Every waiting
// caller returns when its own context ends; a command already on the wire is then left to its
// leader, and its outcome, as with any timed-out command, is unknown.
type coalescer struct {
	rdb   redis.UniversalClient
	slots int // commands or pipelines on the wire at once

	mu       sync.Mutex
	inflight int
	queue    []*waiter

	// waiters recycles waiter values, so that a queued command does not allocate its waiter
	// and wake channel on every call.
	waiters sync.Pool
}

// waiter is one queued caller's command.
type waiter struct {
	queuedCmd
	deadline    time.Time
	hasDeadline bool
	// state is written under coalescer.mu; the caller reads it under co.mu, or after its wake.
	state waiterState
	// wake receives once: when the waiter is made leader, or when its command has its reply.
	wake chan struct{}
	// batch and live are a leader's batch, kept here so that a batch does not allocate them.
	batch, live []*waiter
}

type waiterState uint8

const (
	waitQueued  waiterState = iota // in coalescer.queue
	waitLeading                    // handed a slot; gathers and sends a batch
	waitSending                    // in a leader's batch
)

// coalescerSlots is how many sends are on the wire at once: one per CPU and at least two, so
// that a batch fills while another is on the wire. Fewer slots leave the wire idle between
// batches, more spread callers over shallower pipelines; docs/performance.md ("The default
// client coalesces concurrent commands", BenchmarkSendWays) has the measured slot counts.
func coalescerSlots() int { return max(2, runtime.GOMAXPROCS(0)) }

func newCoalescer(rdb redis.UniversalClient) *coalescer {
	co := &coalescer{rdb: rdb, slots: coalescerSlots()}
	co.waiters.New = func() any { return &waiter{wake: make(chan struct{}, 1)} }
	return co
}

// do runs cmd, on its own when a slot is free and otherwise in the next batch, and returns when
// it has its reply or ctx ends.
func (co *coalescer) do(ctx context.Context, cmd redis.Cmder, src string) error {
	if err := ctx.Err(); err != nil {
		cmd.SetErr(err)
		return err
	}
	co.mu.Lock()
	if co.inflight < co.slots && len(co.queue) == 0 {
		co.inflight++
		co.mu.Unlock()
		processWithFallback(ctx, co.rdb, cmd, src)
		co.freeSlot()
		return cmd.Err()
	}
	w := co.waiters.Get().(*waiter)
	w.ctx, w.cmd, w.src, w.state = ctx, cmd, src, waitQueued
	w.deadline, w.hasDeadline = ctx.Deadline()
	co.queue = append(co.queue, w)
	co.mu.Unlock()

	select {
	case <-w.wake:
	case <-ctx.Done():
		co.abandon(w)
		return ctx.Err()
	}
	if w.state == waitLeading {
		co.lead(w)
	}
	co.recycle(w)
	return callerErr(ctx, cmd)
}

// abandon takes w out of the coalescer after its caller's context ended. A queued waiter
// leaves the queue; one handed a slot passes the slot on; one in a batch on the wire stays with
// its leader, which still writes its reply and wakes it, so it is not recycled.
func (co *coalescer) abandon(w *waiter) {
	co.mu.Lock()
	defer co.mu.Unlock()
	switch w.state {
	case waitQueued:
		co.removeLocked(slices.Index(co.queue, w))
		co.recycle(w)
	case waitLeading:
		<-w.wake // sent under co.mu by handOffLocked
		co.inflight--
		co.handOffLocked()
		co.recycle(w)
	}
}

// removeLocked takes the i-th waiter out of the queue. co.mu must be held.
func (co *coalescer) removeLocked(i int) {
	n := copy(co.queue[i:], co.queue[i+1:])
	co.queue[i+n] = nil
	co.queue = co.queue[:i+n]
}

// freeSlot gives a slot back and hands it to a waiting caller, if any.
func (co *coalescer) freeSlot() {
	co.mu.Lock()
	co.inflight--
	co.handOffLocked()
	co.mu.Unlock()
}

// handOffLocked makes the queued caller with the latest deadline (none counts as latest) the
// leader of the next batch, if a slot is free. co.mu must be held.
func (co *coalescer) handOffLocked() {
	if co.inflight >= co.slots || len(co.queue) == 0 {
		return
	}
	best := 0
	for i, w := range co.queue[1:] {
		if later(w, co.queue[best]) {
			best = i + 1
		}
	}
	w := co.queue[best]
	co.removeLocked(best)
	co.inflight++
	w.state = waitLeading
	w.wake <- struct{}{}
}

// later reports whether a's deadline is after b's; no deadline is later than any.
func later(a, b *waiter) bool {
	switch {
	case !a.hasDeadline:
		return b.hasDeadline
	case !b.hasDeadline:
		return false
	}
	return a.deadline.After(b.deadline)
}

// lead sends the batch of leader w: w's own command and every queued one whose caller's
// deadline is not later than w's (at most maxBatch), then frees w's slot and wakes the others.
func (co *coalescer) lead(w *waiter) {
	batch := append(w.batch[:0], w)
	co.mu.Lock()
	keep := co.queue[:0]
	for _, q := range co.queue {
		if len(batch) < maxBatch && !later(q, w) {
			q.state = waitSending
			batch = append(batch, q)
			continue
		}
		keep = append(keep, q)
	}
	clear(co.queue[len(keep):])
	co.queue = keep
	co.mu.Unlock()

	if len(batch) == 1 {
		processWithFallback(w.ctx, co.rdb, w.cmd, w.src)
	} else {
		co.send(w, batch)
	}
	co.freeSlot()
	for _, q := range batch[1:] {
		q.wake <- struct{}{}
	}
	clear(batch)
	w.batch = batch[:0]
}

// send runs the live commands of batch as one pipeline bounded by the leader's deadline, then
// runs again by source any script Redis had lost, as processWithFallback does for one command.
func (co *coalescer) send(leader *waiter, batch []*waiter) {
	live := leader.live[:0]
	defer func() { clear(live); leader.live = live[:0] }()
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			// Its caller has returned already: sending would only change Redis behind its back.
			q.cmd.SetErr(err)
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return
	}
	// Cancellation of the leader's context must not cut the other callers' commands; its
	// deadline bounds them all (none is later). A context of its own rather than a type with
	// no Done channel: go-redis waits for a free pool connection on ctx.Done().
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if leader.hasDeadline {
		ctx, cancel = context.WithDeadline(ctx, leader.deadline)
	}
	defer cancel()
	execPipeline(ctx, co.rdb, live)
}

func (co *coalescer) recycle(w *waiter) {
	w.ctx, w.cmd, w.src = nil, nil, ""
	co.waiters.Put(w)
}
