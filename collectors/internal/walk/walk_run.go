package walk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNoAnswer explains Up false when no command failed but some node never answered before the
// deadline: a paused or unreachable server whose connection attempts hang, or a deadline too
// short for the first reply of a healthy one. Only a later command can tell those apart.
// collectors reports it as its own ErrNoAnswer.
var ErrNoAnswer = errors.New("redis did not answer before the scrape deadline")

// errAllNamespacesFailed explains Up false when Redis answered but every namespace's commands
// failed (an ACL that allows SCAN but no key the exporter needs, for example).
var errAllNamespacesFailed = errors.New("every namespace failed")

// CommandGrace is how long past the scan's deadline a command sent before it may take. The scan
// stops sending at its deadline by itself; if the socket carried the deadline instead, the
// command in flight would fail with an i/o timeout a moment before the context expired, which
// cannot be told from a failing Redis (that was the cause of lock_exporter_up 0 on a healthy,
// merely large keyspace).
const CommandGrace = time.Second

// Run is one walk over every node's keyspace in progress. Node workers merge each batch into
// the shared state under mu, so any waiter can take a consistent snapshot at any moment.
//
// Its deadline can only move later: a scrape that arrives while it runs and has a later deadline
// extends it rather than start a second walk (so identical scrapes share one) or accept a
// walk cut at an earlier deadline (so a client with a short timeout cannot truncate Prometheus'
// scrape). At most one walk per Scanner sends commands before its deadline.
type Run struct {
	opts    Options
	cls     *Classifier
	replies *ReplyClock
	start   time.Time
	done    chan struct{}
	Final   *Result // set before done is closed

	// ctx is cancelled at the deadline (by timer) or when the Scanner closes; the scan stops
	// sending commands once it is done.
	ctx   context.Context
	stop  context.CancelFunc
	timer *time.Timer

	mu           sync.Mutex
	deadline     time.Time
	expired      bool
	ns           []*nsState
	nodes        []*node
	nodesStarted int
	nodesDone    int
	nodeErr      error
	noIdle       bool
	scanCalls    int64
	keysScanned  int64
	keyspace     int64
	endedAt      time.Time
	holders      map[string]string // by whole key name; set by readHolders after the walk

	// Sink, when set, receives every key the walk reads: the index's builds and backstop walks
	// are walks with a sink.
	Sink KeySink
	// Pace, when set, is the pause after each SCAN call: the backstop walk's keys per second.
	Pace time.Duration
}

// KeySink receives every key a walk reads: the index's build and its backstop walk are walks.
type KeySink interface {
	// Add records one inspected batch, fence keys read for their expiry among its keys; at is
	// the server time (ms) taken before it was sent.
	Add(b *Batch, replies []KeyReply, idleKnown bool, at int64)
	// ExpireTime says whether the inspector reads PEXPIRETIME.
	ExpireTime() bool
	// Now is the server's time, ms.
	Now() int64
}

// node tracks one Redis node's part in this walk.
type node struct {
	addr    string
	reached bool
}

func NewRun(base context.Context, opts Options, cls *Classifier, replies *ReplyClock, start, deadline time.Time) *Run {
	f := &Run{opts: opts, cls: cls, replies: replies, start: start, deadline: deadline, done: make(chan struct{})}
	f.ctx, f.stop = context.WithCancel(base)
	f.timer = time.AfterFunc(time.Until(deadline), f.expire)
	for range opts.Namespaces {
		st := &nsState{top: NewTopK(opts.TopK, opts.FullKeys), noTTLTop: NewTopK(opts.TopK, opts.FullKeys),
			heldTop: NewTopKBy(opts.TopK, opts.FullKeys, LongerHeld)}
		if opts.Soonest {
			st.soonest = NewTopKBy(opts.TopK, opts.FullKeys, Sooner)
		}
		f.ns = append(f.ns, st)
	}
	return f
}

func (f *Run) expire() {
	f.mu.Lock()
	f.expired = true
	f.mu.Unlock()
	f.stop()
}

// extend moves the deadline to d when d is later. It reports false when the walk has already
// reached its deadline: the caller then needs a walk of its own.
func (f *Run) extend(d time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.expired {
		return false
	}
	if !d.After(f.deadline) {
		return true
	}
	if !f.timer.Stop() {
		return false // firing right now
	}
	f.deadline = d
	f.timer.Reset(time.Until(d))
	return true
}

// commandContext bounds one command (or pipeline): the deadline plus commandGrace, so that the
// deadline is enforced by the scan loop and not by the socket.
func (f *Run) commandContext(base context.Context) (context.Context, context.CancelFunc) {
	f.mu.Lock()
	d := f.deadline
	f.mu.Unlock()
	return context.WithDeadline(base, d.Add(CommandGrace))
}

// cut reports whether an error is the scan being cut short (its deadline passed or the scanner
// closed) rather than a Redis fault.
func (f *Run) cut(err error) bool {
	if f.ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return !time.Now().Before(f.deadline)
}

func (f *Run) Finish(at time.Time) {
	f.timer.Stop()
	f.stop()
	f.Final = f.Snapshot(at)
	close(f.done)
}

func (f *Run) startNode(addr string) *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodesStarted++
	n := &node{addr: addr}
	f.nodes = append(f.nodes, n)
	return n
}

// answered records that n answered a command.
func (f *Run) answered(n *node) {
	f.replies.Mark(n.addr, time.Now())
	f.mu.Lock()
	defer f.mu.Unlock()
	n.reached = true
}

// scanned records one SCAN reply of n (keys returned after the server's filters).
func (f *Run) scanned(n *node, keys int) {
	f.answered(n)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scanCalls++
	f.keysScanned += int64(keys)
}

// allReached reports whether every node answered since the walk started; f.mu is held.
func (f *Run) allReached() bool {
	if f.nodesStarted == 0 {
		return false
	}
	for _, n := range f.nodes {
		if !n.reached && !f.replies.Since(n.addr, f.start) {
			return false
		}
	}
	return true
}

func (f *Run) addKeyspace(keys int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyspace += keys
}

func (f *Run) nodeDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodesDone++
}

// failNode records a failure of a whole node (its SCAN, or loading the cluster's slot map).
func (f *Run) failNode(err error) {
	if f.cut(err) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nodeErr == nil {
		f.nodeErr = err
	}
}

// failNamespace records an error confined to namespace i (a command on one of its keys failed).
func (f *Run) failNamespace(i int, err error) {
	if f.cut(err) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ns[i].err == nil {
		f.ns[i].err = fmt.Errorf("namespace %q: %w", f.opts.Namespaces[i].Name, err)
	}
}

func (f *Run) idleUnavailable() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noIdle = true
}

// PassEnded records when the last node's walk ended.
func (f *Run) PassEnded(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endedAt = at
}
