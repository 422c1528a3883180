package collectors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errNoAnswer explains Up false when no command failed but some node never answered before the
// deadline (a paused or unreachable server whose connection attempts hang).
var errNoAnswer = errors.New("redis did not answer before the scrape deadline")

// flight is one scan in progress. Workers (one per node and namespace) merge each batch into
// the shared state under mu, so any waiter can take a consistent snapshot at any moment.
type flight struct {
	opts     Options
	start    time.Time
	deadline time.Time
	done     chan struct{}
	final    *Result // set before done is closed

	mu           sync.Mutex
	ns           []*nsState
	nodesStarted int
	nodesReached int
	err          error
	noIdle       bool
}

// nsState is one namespace's running aggregate across every node.
type nsState struct {
	keys, noTTL int64
	examined    int
	minTTL      time.Duration
	hasTTL      bool
	maxIdle     time.Duration
	hasIdle     bool
	top         *topK
	truncated   bool
	failed      bool
	nodesDone   int
	lastDone    time.Time
}

// node tracks whether one Redis node has answered during this flight.
type node struct {
	reached bool
}

func newFlight(opts Options, start, deadline time.Time) *flight {
	f := &flight{opts: opts, start: start, deadline: deadline, done: make(chan struct{})}
	for range opts.Namespaces {
		f.ns = append(f.ns, &nsState{top: newTopK(opts.TopK)})
	}
	return f
}

func (f *flight) startNode() *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodesStarted++
	return &node{}
}

func (f *flight) reach(n *node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !n.reached {
		n.reached = true
		f.nodesReached++
	}
}

// reserve claims up to want keys of namespace i's cap. more is false once the cap is reached
// and keys were left over: the caller examines allowed keys and stops.
func (f *flight) reserve(i, want int) (allowed int, more bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.ns[i]
	allowed = min(want, f.opts.MaxKeys-st.examined)
	st.examined += allowed
	if allowed < want {
		st.truncated = true
		return allowed, false
	}
	return allowed, true
}

// merge folds one batch of live keys into namespace i; idleKnown says whether the batch's Idle
// values were read (false under an LFU policy).
func (f *flight) merge(i int, batch []KeyInfo, idleKnown bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.ns[i]
	for _, k := range batch {
		st.keys++
		if k.TTL == NoTTL {
			st.noTTL++
		} else if !st.hasTTL || k.TTL < st.minTTL {
			st.minTTL, st.hasTTL = k.TTL, true
		}
		if idleKnown && (!st.hasIdle || k.Idle > st.maxIdle) {
			st.maxIdle, st.hasIdle = k.Idle, true
		}
		st.top.offer(k)
	}
}

func (f *flight) idleUnavailable() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noIdle = true
}

func (f *flight) nsDone(i int, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ns[i].nodesDone++
	f.ns[i].lastDone = at
}

// fail records a failure of namespace i (or of the whole scan when i is -1). A failure after the
// deadline is the deadline cutting the scan short, not a Redis fault: the namespace simply stays
// incomplete.
func (f *flight) fail(ctx context.Context, i int, err error) {
	if ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= 0 {
		f.ns[i].failed = true
		err = fmt.Errorf("namespace %q: %w", f.opts.Namespaces[i].Name, err)
	}
	if f.err == nil {
		f.err = err
	}
}

func (f *flight) finish(at time.Time) {
	f.final = f.snapshot(at)
	close(f.done)
}

// snapshot copies the state as of at. A namespace is complete once every node that started has
// finished it; node goroutines all start within microseconds of the slot map being loaded, long
// before any waiter's deadline, so a node that has not registered yet is not a practical concern.
func (f *flight) snapshot(at time.Time) *Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &Result{
		Up:                f.err == nil && f.nodesStarted > 0 && f.nodesReached == f.nodesStarted,
		Err:               f.err,
		IdleTimeAvailable: !f.noIdle,
	}
	if !res.Up && res.Err == nil {
		res.Err = errNoAnswer
	}
	for i, st := range f.ns {
		complete := !st.failed && f.nodesStarted > 0 && st.nodesDone == f.nodesStarted
		dur := at.Sub(f.start)
		if complete {
			dur = st.lastDone.Sub(f.start)
		}
		res.Namespaces = append(res.Namespaces, NamespaceResult{
			Namespace:      f.opts.Namespaces[i],
			Keys:           st.keys,
			KeysWithoutTTL: st.noTTL,
			MinTTL:         st.minTTL,
			HasTTL:         st.hasTTL,
			MaxIdle:        st.maxIdle,
			HasIdle:        st.hasIdle,
			Stalest:        st.top.sorted(),
			Truncated:      st.truncated,
			Complete:       complete,
			Duration:       dur,
		})
	}
	return res
}
