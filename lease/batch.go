package lease

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxBatch caps the commands of one pipeline, so that one flusher never holds a connection for
// an unbounded reply.
const maxBatch = 128

// batcher coalesces the commands of concurrent callers into go-redis pipelines. A few flusher
// goroutines drain one shared queue; each takes everything queued (up to maxBatch) and sends it
// as one pipeline, so concurrent commands share a write and a read system call instead of
// paying one pair each. Callers wait on their own context, never on the batch: a caller whose
// context ends returns at once, and the outcome of its command, as with any timed-out command,
// is unknown.
type batcher struct {
	rdb redis.UniversalClient

	mu     sync.Mutex
	cond   sync.Cond // signalled when queue grows or closed is set
	queue  []*request
	closed bool

	wg sync.WaitGroup

	// requests recycles request values: a batched command would otherwise allocate its
	// request and done channel on every call.
	requests sync.Pool
}

// request is one caller's command on its way through a batch. done receives once the command
// has its reply (or its error). A request goes back to the pool only when its caller read the
// reply, so a flusher never writes to a request that was handed out again.
type request struct {
	queuedCmd
	done chan struct{}
}

// flusherCount bounds the pipelines in flight: one per CPU, and at least two so that a batch
// fills while another is on the wire. More flushers would spread the same callers over more,
// shallower pipelines, each paying its own round trip; the coalescer's send slots follow the
// same rule (docs/performance.md, "The default client coalesces concurrent commands", has the
// measurements).
func flusherCount() int { return max(2, runtime.GOMAXPROCS(0)) }

func newBatcher(rdb redis.UniversalClient) *batcher {
	b := &batcher{rdb: rdb}
	b.cond.L = &b.mu
	b.requests.New = func() any { return &request{done: make(chan struct{}, 1)} }
	n := flusherCount()
	b.wg.Add(n)
	for range n {
		go b.flusher()
	}
	return b
}

// do queues cmd and waits for its reply or for ctx's end, whichever comes first.
func (b *batcher) do(ctx context.Context, cmd redis.Cmder, src string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := b.requests.Get().(*request)
	r.ctx, r.cmd, r.src = ctx, cmd, src
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		r.ctx, r.cmd = nil, nil
		b.requests.Put(r)
		return ErrClosed
	}
	b.queue = append(b.queue, r)
	b.cond.Signal()
	b.mu.Unlock()
	select {
	case <-r.done:
		r.ctx, r.cmd = nil, nil
		b.requests.Put(r)
		return callerErr(ctx, cmd)
	case <-ctx.Done():
		// The request stays with the flusher, which skips it if it has not been sent yet.
		return ctx.Err()
	}
}

// close stops taking commands, lets the flushers send what is queued and waits for them.
func (b *batcher) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *batcher) flusher() {
	defer b.wg.Done()
	batch := make([]*request, 0, maxBatch)
	for {
		b.mu.Lock()
		for len(b.queue) == 0 && !b.closed {
			b.cond.Wait()
		}
		if len(b.queue) == 0 {
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), maxBatch)
		batch = append(batch[:0], b.queue[:n]...)
		rest := copy(b.queue, b.queue[n:])
		clear(b.queue[rest:])
		b.queue = b.queue[:rest]
		if rest > 0 {
			// More than one batch was queued: hand the rest to another flusher now.
			b.cond.Signal()
		}
		b.mu.Unlock()
		b.flush(batch)
		clear(batch)
	}
}

// flush sends the live requests of batch as one pipeline and wakes every caller.
func (b *batcher) flush(batch []*request) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			// Its caller has returned already: sending the command would only change Redis
			// behind its back.
			r.cmd.SetErr(err)
			r.done <- struct{}{}
			continue
		}
		live = append(live, r)
	}
	if len(live) > 0 {
		ctx, cancel := batchContext(live)
		execPipeline(ctx, b.rdb, live)
		cancel()
	}
	for _, r := range live {
		r.done <- struct{}{}
	}
}

// batchContext bounds a pipeline by the latest deadline of its callers: no caller waits past
// its own deadline anyway, and the pipeline must not be cut short for a caller still waiting.
// One caller without a deadline leaves the pipeline to the client's read and write timeouts,
// as its own command would be without batching. Callers' context values are not carried over.
func batchContext(live []*request) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, r := range live {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.Background(), func() {}
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
