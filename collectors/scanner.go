package collectors

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrScannerClosed is the Result error of a Scan called after Close.
var ErrScannerClosed = errors.New("collectors: scanner closed")

// Scanner scans the configured lock namespaces in Redis. It is safe for concurrent use:
// concurrent Scan calls share the scan in flight, so N simultaneous scrapes cost Redis one scan.
type Scanner struct {
	client redis.UniversalClient
	opts   Options
	subs   []concern

	// base parents every scan, so that a scan outlives the scrape that started it (later
	// scrapes may be waiting on it) while Close can still stop it.
	base   context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	flight  *flight
	closed  bool
	running sync.WaitGroup
}

// NewScanner validates opts, applies defaults and returns a Scanner reading through client.
// A *redis.ClusterClient is scanned master by master; any other client (single node, Sentinel
// failover) is scanned as one node. Give the client ContextTimeoutEnabled so that socket reads
// honour the scan deadline; Scan returns at its deadline either way.
func NewScanner(client redis.UniversalClient, opts Options) (*Scanner, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	base, cancel := context.WithCancel(context.Background())
	return &Scanner{
		client: client,
		opts:   opts,
		subs:   newConcerns(),
		base:   base,
		cancel: cancel,
	}, nil
}

// Options returns the options in effect, defaults applied.
func (s *Scanner) Options() Options { return s.opts }

// Scan returns what the scan in flight (or a new one) saw by the time it ended or ctx ended,
// whichever comes first. The scan itself runs until it finishes or until its own deadline: the
// earlier of ctx's deadline and Options.Timeout, taken from the call that started it.
func (s *Scanner) Scan(ctx context.Context) *Result {
	now := time.Now()
	deadline := now.Add(s.opts.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return closedResult(s.opts)
	}
	f := s.flight
	// A flight past its deadline is stuck on a client that ignores context deadlines; leave it
	// to its socket timeouts rather than hand its stale state to a new scrape.
	if f == nil || !now.Before(f.deadline) {
		f = newFlight(s.opts, now, deadline)
		s.flight = f
		s.running.Add(1)
		go s.run(f)
	}
	s.mu.Unlock()

	until := deadline
	if f.deadline.Before(until) {
		until = f.deadline
	}
	wait := time.NewTimer(time.Until(until))
	defer wait.Stop()
	select {
	case <-f.done:
		return f.final
	case <-ctx.Done():
	case <-wait.C:
	}
	return f.snapshot(time.Now())
}

// Close stops a scan in flight and waits for it. Later Scan calls report ErrScannerClosed.
// The Redis client is the caller's to close.
func (s *Scanner) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.running.Wait()
}

func (s *Scanner) run(f *flight) {
	defer s.running.Done()
	ctx, cancel := context.WithDeadline(s.base, f.deadline)
	defer cancel()

	if cc, ok := s.client.(*redis.ClusterClient); ok {
		// fn records its own failures, so the only error left is loading the cluster's slot map.
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			f.scanNode(ctx, node)
			return nil
		}); err != nil {
			f.fail(ctx, -1, err)
		}
	} else {
		f.scanNode(ctx, s.client)
	}

	s.mu.Lock()
	if s.flight == f {
		s.flight = nil
	}
	s.mu.Unlock()
	f.finish(time.Now())
	if res := f.final; !res.Up {
		s.opts.Logger.Warn("lock key scan failed", "err", res.Err)
	} else {
		for _, ns := range res.Namespaces {
			if !ns.Complete {
				s.opts.Logger.Debug("lock key scan cut by its deadline", "lock_namespace", ns.Namespace.Name,
					"keys_seen", ns.Keys, "after", ns.Duration)
			}
		}
	}
}

func closedResult(opts Options) *Result {
	res := &Result{Err: ErrScannerClosed, IdleTimeAvailable: true}
	for _, ns := range opts.Namespaces {
		res.Namespaces = append(res.Namespaces, NamespaceResult{Namespace: ns})
	}
	return res
}
