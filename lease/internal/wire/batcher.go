package wire

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBatch caps the commands of one pipeline, so that one leader never holds a connection for
// an unbounded reply.
const maxBatch = 128

// batcher is how a Sender on a client of one deployment reaches Redis: group commit without
// goroutines of its own, its depth set by what the sends measure. A caller that finds fewer
// sends on the wire than the cap (sendLimit) sends its own command at once, through go-redis's
// ProcessHook, exactly as a plain go-redis call would: a lone or unhurried caller pays two
// uncontended mutex operations and nothing else. A caller that finds the cap reached queues its
// command and waits. When a send is answered, its caller hands the freed place to one waiting
// caller (the leader), which sends every queued command as one go-redis pipeline: one write and
// one read system call for all of them, where each would otherwise wait for a place and pay its
// own round trip. Queues form only while sends are waiting for a place, and vanish when they
// are not.
//
// Deadlines: the leader sends only commands whose callers' deadlines are not later than its
// own, on a context bounded by its own deadline, so no leader waits past its deadline for
// another caller's command and no command is cut before its caller's deadline. The place goes
// to the waiting caller with the latest deadline, which can take the whole queue. Every waiting
// caller returns when its own context ends; a command already on the wire is then left to its
// leader, and its outcome, as with any timed-out command, is unknown.
type batcher struct {
	rdb redis.UniversalClient

	mu       sync.Mutex
	inflight int // commands or pipelines on the wire
	limit    sendLimit
	queue    []*waiter

	// waiters recycles waiter values, so that a queued command does not allocate its waiter
	// and wake channel on every call.
	waiters sync.Pool
	// pipes recycles go-redis pipelines: rdb.Pipeline() costs about five allocations, paid per
	// batch otherwise. A pipeline is empty whenever it is in the pool.
	pipes sync.Pool
}

// waiter is one queued caller's command.
type waiter struct {
	queuedCmd
	deadline    time.Time
	hasDeadline bool
	// state is written under batcher.mu; the caller reads it under batcher.mu, or after its wake.
	state waiterState
	// wake receives once: when the waiter is made leader, or when its command has its reply.
	wake chan struct{}
	// batch and live are a leader's batch, kept here so that a batch does not allocate them.
	batch, live []*waiter
}

type waiterState uint8

const (
	waitQueued  waiterState = iota // in batcher.queue
	waitLeading                    // handed a place; gathers and sends a batch
	waitSending                    // in a leader's batch
)

// initialSendLimit is the cap a Sender starts with: one send per CPU and at least two, so that
// a batch fills while another is on the wire (the fastest fixed cap under CPU load in
// docs/performance.md); the cap then follows the measured throughput.
func initialSendLimit() int { return max(2, runtime.GOMAXPROCS(0)) }

// maxSendLimit is the highest cap: the client's connection pool, beyond which sends would wait
// for a connection inside go-redis instead of in the queue.
func maxSendLimit(rdb *redis.Client) int {
	return max(1, rdb.Options().PoolSize)
}

func newBatcher(rdb *redis.Client) *batcher {
	b := &batcher{rdb: rdb, limit: newSendLimit(initialSendLimit(), maxSendLimit(rdb))}
	b.waiters.New = func() any { return &waiter{wake: make(chan struct{}, 1)} }
	b.pipes.New = func() any { return rdb.Pipeline() }
	return b
}

// do runs cmd, on its own while the cap allows another send and otherwise in the next batch,
// and returns when it has its reply or ctx ends.
func (b *batcher) do(ctx context.Context, cmd redis.Cmder, src string) error {
	if err := ctx.Err(); err != nil {
		cmd.SetErr(err)
		return err
	}
	b.mu.Lock()
	if b.inflight < b.limit.cur && len(b.queue) == 0 {
		b.inflight++
		b.mu.Unlock()
		processWithFallback(ctx, b.rdb, cmd, src)
		b.answered(1)
		return cmd.Err()
	}
	w := b.waiters.Get().(*waiter)
	w.ctx, w.cmd, w.src, w.state = ctx, cmd, src, waitQueued
	w.deadline, w.hasDeadline = ctx.Deadline()
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	select {
	case <-w.wake:
	case <-ctx.Done():
		b.abandon(w)
		return ctx.Err()
	}
	if w.state == waitLeading {
		b.lead(w)
	}
	b.recycle(w)
	return callerErr(ctx, cmd)
}

// abandon takes w out of the batcher after its caller's context ended. A queued waiter
// leaves the queue; one handed a place passes it on; one in a batch on the wire stays with its
// leader, which still writes its reply and wakes it, so it is not recycled.
func (b *batcher) abandon(w *waiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch w.state {
	case waitQueued:
		b.removeLocked(slices.Index(b.queue, w))
		b.recycle(w)
	case waitLeading:
		<-w.wake // sent under b.mu by handOffLocked
		b.inflight--
		b.handOffLocked()
		b.recycle(w)
	}
}

// removeLocked takes the i-th waiter out of the queue. b.mu must be held.
func (b *batcher) removeLocked(i int) {
	n := copy(b.queue[i:], b.queue[i+1:])
	b.queue[i+n] = nil
	b.queue = b.queue[:i+n]
}

// answered gives back the place of a send that carried n commands, lets the cap follow the
// measured pace, and hands the place to a waiting caller, if any.
func (b *batcher) answered(n int) {
	b.mu.Lock()
	b.inflight--
	if b.limit.answered(n) {
		b.limit.endWindow(time.Now())
	}
	b.handOffLocked()
	b.mu.Unlock()
}

// handOffLocked makes the queued caller with the latest deadline (none counts as latest) the
// leader of the next batch, while the cap allows another send. b.mu must be held.
func (b *batcher) handOffLocked() {
	if b.inflight >= b.limit.cur || len(b.queue) == 0 {
		return
	}
	best := 0
	for i, w := range b.queue[1:] {
		if later(w, b.queue[best]) {
			best = i + 1
		}
	}
	w := b.queue[best]
	b.removeLocked(best)
	b.inflight++
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
// deadline is not later than w's (at most maxBatch), then gives back w's place and wakes the
// others.
func (b *batcher) lead(w *waiter) {
	batch := append(w.batch[:0], w)
	b.mu.Lock()
	keep := b.queue[:0]
	for _, q := range b.queue {
		if len(batch) < maxBatch && !later(q, w) {
			q.state = waitSending
			batch = append(batch, q)
			continue
		}
		keep = append(keep, q)
	}
	clear(b.queue[len(keep):])
	b.queue = keep
	b.mu.Unlock()

	if len(batch) == 1 {
		processWithFallback(w.ctx, b.rdb, w.cmd, w.src)
	} else {
		b.send(w, batch)
	}
	b.answered(len(batch))
	for _, q := range batch[1:] {
		q.wake <- struct{}{}
	}
	clear(batch)
	w.batch = batch[:0]
}

// send runs the live commands of batch as one pipeline bounded by the leader's deadline, then
// runs again by source any script Redis had lost, as processWithFallback does for one command.
func (b *batcher) send(leader *waiter, batch []*waiter) {
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
	// no Done channel: go-redis waits for a free pool connection on ctx.Done(). An attemptCtx
	// on Background: the deadline without a cancel chain.
	ctx := context.Background()
	if leader.hasDeadline {
		a := newAttemptCtx(ctx, leader.deadline, nil)
		defer a.End()
		ctx = a
	}
	pipe := b.pipes.Get().(redis.Pipeliner)
	execPipeline(ctx, b.rdb, pipe, live)
	b.pipes.Put(pipe)
}

func (b *batcher) recycle(w *waiter) {
	w.ctx, w.cmd, w.src = nil, nil, ""
	b.waiters.Put(w)
}
