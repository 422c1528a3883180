package collectors

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// walker reads namespaces by a walk of the keyspace: one walk per node, shared by the scrapes
// that overlap it. A Scanner has one for its own namespaces and its index's builds; the index
// keeps more for what it cannot serve in a scrape.
type walker struct {
	client   redis.UniversalClient
	opts     walkOptions
	cls      *walk.Classifier
	typeScan *walk.TypeSupport
	replies  *walk.ReplyClock

	// base parents every walk, so that a walk outlives the scrape that started it (later
	// scrapes may be waiting on it) while close can still stop it.
	base   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	inFlight *walkRun
	closed   bool
	running  sync.WaitGroup
}

// newWalker returns a walker reading opts.Namespaces through client, with options that hold
// defaults and are valid; parent ends every walk.
func newWalker(parent context.Context, client redis.UniversalClient, opts walkOptions) *walker {
	base, cancel := context.WithCancel(parent)
	return &walker{
		client:   client,
		opts:     opts,
		cls:      walk.NewClassifier(opts.Namespaces),
		typeScan: walk.NewTypeSupport(),
		replies:  walk.NewReplyClock(),
		base:     base,
		cancel:   cancel,
	}
}

// Scan returns what the walk in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first: Scanner.Scan says how walks are shared. The Result is shared with the
// other scrapes of its walk: read it, never change it.
func (w *walker) Scan(ctx context.Context) *walkResult {
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
		f = newWalkRun(w.base, w.opts, w.cls, w.replies, now, deadline)
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
func closedWalk(opts walkOptions) *walkResult {
	res := &walkResult{Err: ErrScannerClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, walkNamespaceResult{Namespace: ns})
	}
	return res
}

// Close stops a walk in flight and waits for it. Later scans report ErrScannerClosed.
func (w *walker) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.running.Wait()
}

func (w *walker) run(f *walkRun) {
	defer w.running.Done()
	if cc, ok := w.client.(*redis.ClusterClient); ok {
		ctx, cancel := f.commandContext(f.ctx)
		// fn records its own failures, so the only error left is loading the cluster's slot map.
		err := walk.ForEachMaster(ctx, cc, func(node *redis.Client) { w.WalkNode(f, node) })
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
