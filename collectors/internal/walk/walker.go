package walk

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrClosed is the error of a walk asked for after its walker closed; collectors reports it as
// ErrScannerClosed.
var ErrClosed = errors.New("collectors: scanner closed")

// Walker reads namespaces by a walk of the keyspace: one walk per node, shared by the scrapes
// that overlap it. A Scanner has one for its own namespaces and its index's builds; the index
// keeps more for what it cannot serve in a scrape.
type Walker struct {
	client   redis.UniversalClient
	opts     Options
	cls      *Classifier
	typeScan *TypeSupport
	replies  *ReplyClock

	// base parents every walk, so that a walk outlives the scrape that started it (later
	// scrapes may be waiting on it) while close can still stop it.
	base   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	inFlight *Run
	closed   bool
	running  sync.WaitGroup
}

// NewWalker returns a walker reading opts.Namespaces through client, with options that hold
// defaults and are valid; parent ends every walk.
func NewWalker(parent context.Context, client redis.UniversalClient, opts Options) *Walker {
	base, cancel := context.WithCancel(parent)
	return &Walker{
		client:   client,
		opts:     opts,
		cls:      NewClassifier(opts.Namespaces),
		typeScan: NewTypeSupport(),
		replies:  NewReplyClock(),
		base:     base,
		cancel:   cancel,
	}
}

// Scan returns what the walk in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first: Scanner.Scan says how walks are shared. The Result is shared with the
// other scrapes of its walk: read it, never change it.
func (w *Walker) Scan(ctx context.Context) *Result {
	now := time.Now()
	deadline := now.Add(w.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return closedWalk(w.opts)
	}
	f := w.inFlight
	// A walk past its deadline has stopped sending commands and is only waiting for the last
	// replies: start afresh rather than hand its state to a new scrape.
	if f == nil || !f.extend(deadline) {
		f = NewRun(w.base, w.opts, w.cls, w.replies, now, deadline)
		w.inFlight = f
		w.running.Add(1)
		go w.run(f)
	}
	w.mu.Unlock()

	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case <-f.done:
		return f.Final
	case <-ctx.Done():
	case <-wait.C:
	}
	return f.Snapshot(time.Now())
}

// closedWalk is the result of a walk asked for after its walker closed: every namespace unknown.
func closedWalk(opts Options) *Result {
	res := &Result{Err: ErrClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, NamespaceResult{Namespace: ns})
	}
	return res
}

// Replies is when each node last answered one of the walker's walks: the index's walks share it.
func (w *Walker) Replies() *ReplyClock { return w.replies }

// Close stops a walk in flight and waits for it. Later scans report ErrClosed.
func (w *Walker) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.running.Wait()
}

func (w *Walker) run(f *Run) {
	defer w.running.Done()
	if cc, ok := w.client.(*redis.ClusterClient); ok {
		ctx, cancel := f.commandContext(f.ctx)
		// fn records its own failures, so the only error left is loading the cluster's slot map.
		err := ForEachMaster(ctx, cc, func(node *redis.Client) { w.WalkNode(f, node) })
		cancel()
		if err != nil {
			f.failNode(err)
		}
	} else {
		w.WalkNode(f, w.client)
	}
	f.PassEnded(time.Now())
	w.readHolders(f)

	w.mu.Lock()
	if w.inFlight == f {
		w.inFlight = nil
	}
	w.mu.Unlock()
	f.Finish(time.Now())
	if w.opts.Report != nil {
		w.opts.Report(f.Final)
	}
}
