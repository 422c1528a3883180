package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
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
	opts     Options
	cls      *walk.Classifier
	typeScan *walk.TypeSupport
	replies  *walk.ReplyClock
	// quiet: the walker logs none of its walks' results, since its owner logs the scrape's.
	quiet bool

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
func newWalker(parent context.Context, client redis.UniversalClient, opts Options) *walker {
	base, cancel := context.WithCancel(parent)
	return &walker{
		client:   client,
		opts:     opts,
		cls:      walk.NewClassifier(walkNamespaces(opts.Namespaces)),
		typeScan: walk.NewTypeSupport(),
		replies:  walk.NewReplyClock(),
		base:     base,
		cancel:   cancel,
	}
}

// scan returns what the walk in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first: Scanner.Scan says how walks are shared. The Result is shared with the
// other scrapes of its walk: read it, never change it.
func (w *walker) scan(ctx context.Context) *Result {
	now := time.Now()
	deadline := now.Add(w.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return closedResult(w.opts)
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
		return f.final
	case <-ctx.Done():
	case <-wait.C:
	}
	return f.snapshot(time.Now())
}

// walkedCopy labels a copy of a walk's Result, whose final form is shared by every scrape that
// waited on its walk, as walked, each namespace for the reason in why (by position).
func walkedCopy(shared *Result, why map[int]string) *Result {
	res := *shared
	res.Namespaces = slices.Clone(shared.Namespaces)
	for i := range res.Namespaces {
		res.Namespaces[i].Mode = modeWalk
		res.Namespaces[i].ModeReason = why[i]
	}
	return &res
}

// closedResult is the Result of a scan after its Scanner closed: every namespace unknown.
func closedResult(opts Options) *Result {
	res := &Result{Err: ErrScannerClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, NamespaceResult{Namespace: ns})
	}
	return res
}

// close stops a walk in flight and waits for it. Later scans report ErrScannerClosed.
func (w *walker) close() {
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
		err := walk.ForEachMaster(ctx, cc, func(node *redis.Client) { w.walkNode(f, node) })
		cancel()
		if err != nil {
			f.failNode(err)
		}
	} else {
		w.walkNode(f, w.client)
	}
	f.passEnded(time.Now())
	w.readHolders(f)

	w.mu.Lock()
	if w.inFlight == f {
		w.inFlight = nil
	}
	w.mu.Unlock()
	f.finish(time.Now())
	if !w.quiet {
		logResult(w.opts.Logger, f.final, nil)
	}
}

// logResult logs a failed scrape to log as one line, or each failed namespace as one. A line
// for which repeated (when not nil) reports true is left out.
func logResult(log *slog.Logger, res *Result, repeated func(line string) bool) {
	if !res.Up {
		if repeated == nil || !repeated(fmt.Sprint(res.Err)) {
			log.Warn("lock key scan failed", "err", res.Err)
		}
		return
	}
	for _, ns := range res.Namespaces {
		switch {
		case ns.Err != nil:
			if repeated == nil || !repeated(ns.Namespace.Name+"\x00"+ns.Err.Error()) {
				log.Warn("lock key scan failed for one namespace", "lock_namespace", ns.Namespace.Name, "err", ns.Err)
			}
		case !ns.Complete:
			log.Debug("lock key scan cut by its deadline", "lock_namespace", ns.Namespace.Name,
				"keys_seen", ns.Keys, "after", ns.Duration)
		}
	}
}
