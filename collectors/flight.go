package collectors

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
var ErrNoAnswer = errors.New("redis did not answer before the scrape deadline")

// errAllNamespacesFailed explains Up false when Redis answered but every namespace's commands
// failed (an ACL that allows SCAN but no key the exporter needs, for example).
var errAllNamespacesFailed = errors.New("every namespace failed")

// commandGrace is how long past the scan's deadline a command sent before it may take. The scan
// stops sending at its deadline by itself; if the socket carried the deadline instead, the
// command in flight would fail with an i/o timeout a moment before the context expired, which
// cannot be told from a failing Redis (that was the cause of lock_exporter_up 0 on a healthy,
// merely large keyspace).
const commandGrace = time.Second

// flight is one pass over the keyspace in progress. Node workers merge each batch into the shared
// state under mu, so any waiter can take a consistent snapshot at any moment.
//
// Its deadline can only move later: a scrape that arrives while it runs and has a later deadline
// extends it rather than start a second pass (so identical scrapes share one pass) or accept a
// pass cut at an earlier deadline (so a client with a short timeout cannot truncate Prometheus'
// scrape). At most one flight per Scanner sends commands before its deadline.
type flight struct {
	opts    Options
	cls     *classifier
	replies *replyClock
	start   time.Time
	done    chan struct{}
	final   *Result // set before done is closed

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
	holders      map[string]string // by whole key name; set by readHolders after the pass
}

// nsState is one namespace's running aggregate across every node.
type nsState struct {
	keys, noTTL, fence int64
	examined           int // keys reserved under the cap
	inspected          int // reserved keys whose inspection came back
	minTTL             time.Duration
	hasTTL             bool
	maxIdle            time.Duration
	hasIdle            bool
	top                *topK // stalest keys
	noTTLTop           *topK // stalest keys without expiry
	truncated          bool
	err                error
}

// node tracks one Redis node's part in this flight.
type node struct {
	addr    string
	reached bool
}

// replyClock remembers when each node last answered a command of any pass. A node counts as
// reached by a pass when it answered after the pass started, even if the answer was to the
// previous pass's last pipeline: a Redis busy finishing the exporter's own commands is up, not
// down. (Without this, a scrape right after a cut one could see its first SCAN queued behind the
// cut pass's last pipelines past its deadline, and report a healthy Redis as down.)
type replyClock struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func newReplyClock() *replyClock { return &replyClock{last: map[string]time.Time{}} }

func (c *replyClock) mark(addr string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.last[addr]) {
		c.last[addr] = at
	}
}

func (c *replyClock) since(addr string, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.last[addr].Before(t)
}

func newFlight(base context.Context, opts Options, cls *classifier, replies *replyClock, start, deadline time.Time) *flight {
	f := &flight{opts: opts, cls: cls, replies: replies, start: start, deadline: deadline, done: make(chan struct{})}
	f.ctx, f.stop = context.WithCancel(base)
	f.timer = time.AfterFunc(time.Until(deadline), f.expire)
	for range opts.Namespaces {
		f.ns = append(f.ns, &nsState{top: newTopK(opts.TopK, opts.FullKeys), noTTLTop: newTopK(opts.TopK, opts.FullKeys)})
	}
	return f
}

func (f *flight) expire() {
	f.mu.Lock()
	f.expired = true
	f.mu.Unlock()
	f.stop()
}

// extend moves the deadline to d when d is later. It reports false when the flight has already
// reached its deadline: the caller then needs a flight of its own.
func (f *flight) extend(d time.Time) bool {
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
func (f *flight) commandContext(base context.Context) (context.Context, context.CancelFunc) {
	f.mu.Lock()
	d := f.deadline
	f.mu.Unlock()
	return context.WithDeadline(base, d.Add(commandGrace))
}

// cut reports whether an error is the scan being cut short (its deadline passed or the scanner
// closed) rather than a Redis fault.
func (f *flight) cut(err error) bool {
	if f.ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return !time.Now().Before(f.deadline)
}

func (f *flight) startNode(addr string) *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodesStarted++
	n := &node{addr: addr}
	f.nodes = append(f.nodes, n)
	return n
}

// answered records that n answered a command.
func (f *flight) answered(n *node) {
	f.replies.mark(n.addr, time.Now())
	f.mu.Lock()
	defer f.mu.Unlock()
	n.reached = true
}

// scanned records one SCAN reply of n (keys returned after the server's filters).
func (f *flight) scanned(n *node, keys int) {
	f.answered(n)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scanCalls++
	f.keysScanned += int64(keys)
}

// allReached reports whether every node answered since the flight started; f.mu is held.
func (f *flight) allReached() bool {
	if f.nodesStarted == 0 {
		return false
	}
	for _, n := range f.nodes {
		if !n.reached && !f.replies.since(n.addr, f.start) {
			return false
		}
	}
	return true
}

func (f *flight) addKeyspace(keys int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyspace += keys
}

func (f *flight) nodeDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodesDone++
}

// failNode records a failure of a whole node (its SCAN, or loading the cluster's slot map).
func (f *flight) failNode(err error) {
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
func (f *flight) failNamespace(i int, err error) {
	if f.cut(err) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ns[i].err == nil {
		f.ns[i].err = fmt.Errorf("namespace %q: %w", f.opts.Namespaces[i].Name, err)
	}
}

// admit takes keys of one classified SCAN reply, from index from on, into the pass until b holds
// limit keys: fence counters are counted, holder keys skipped, other keys claim a place under each matching
// namespace's cap and are added to b for inspection. It returns where it stopped and whether
// every namespace has reached its cap, so the pass can stop.
func (f *flight) admit(reply *classified, from int, b *batch, limit int) (next int, capsReached bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := from
	for ; k < len(reply.keys) && len(b.keys) < limit; k++ {
		key := reply.keys[k]
		matches := reply.ns[reply.off[k]:reply.off[k+1]]
		switch reply.companion[k] {
		case fenceCompanion:
			for _, i := range matches {
				f.ns[i].fence++
			}
			continue
		case holderCompanion:
			continue // lives and dies with its lock, which is counted
		}
		start := len(b.ns)
		for _, i := range matches {
			if st := f.ns[i]; st.examined < f.opts.MaxKeys {
				st.examined++
				b.ns = append(b.ns, i)
			} else {
				st.truncated = true
			}
		}
		if len(b.ns) > start {
			b.keys = append(b.keys, key)
			b.off = append(b.off, int32(len(b.ns)))
		}
	}
	for _, st := range f.ns {
		if !st.truncated {
			return k, false
		}
	}
	return k, true
}

func (f *flight) idleUnavailable() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noIdle = true
}

// merge folds one inspected key into namespace i; idleKnown says whether k.Idle was read.
func (st *nsState) merge(k KeyInfo, idleKnown bool) {
	st.keys++
	if k.TTL == NoTTL {
		st.noTTL++
		st.noTTLTop.offer(k)
	} else if !st.hasTTL || k.TTL < st.minTTL {
		st.minTTL, st.hasTTL = k.TTL, true
	}
	if idleKnown && (!st.hasIdle || k.Idle > st.maxIdle) {
		st.maxIdle, st.hasIdle = k.Idle, true
	}
	st.top.offer(k)
}

// passEnded records when the last node's pass ended.
func (f *flight) passEnded(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endedAt = at
}

func (f *flight) finish(at time.Time) {
	f.timer.Stop()
	f.stop()
	f.final = f.snapshot(at)
	close(f.done)
}

// snapshot copies the state as of at. A namespace is complete once every node that started has
// finished the pass (or the namespace reached its cap and all its keys came back) without an
// error of its own. Node goroutines all start within microseconds of the slot map being loaded,
// long before any waiter's deadline, so a node that has not registered yet is not a practical
// concern.
func (f *flight) snapshot(at time.Time) *Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	reached := f.allReached()
	passDone := f.nodeErr == nil && f.nodesStarted > 0 && f.nodesDone == f.nodesStarted
	res := &Result{
		Err:               f.nodeErr,
		IdleTimeAvailable: !f.noIdle,
		ScanCalls:         f.scanCalls,
		KeysScanned:       f.keysScanned,
		Keyspace:          f.keyspace,
	}
	dur := at.Sub(f.start)
	if passDone && !f.endedAt.IsZero() {
		dur = f.endedAt.Sub(f.start)
	}
	failed := 0
	for i, st := range f.ns {
		capped := st.truncated && st.inspected == st.examined
		if st.err != nil {
			failed++
		}
		res.Namespaces = append(res.Namespaces, NamespaceResult{
			Namespace:      f.opts.Namespaces[i],
			Keys:           st.keys,
			KeysWithoutTTL: st.noTTL,
			FenceKeys:      st.fence,
			MinTTL:         st.minTTL,
			HasTTL:         st.hasTTL,
			MaxIdle:        st.maxIdle,
			HasIdle:        st.hasIdle,
			Stalest:        f.withHolders(st.top.sorted()),
			StalestNoTTL:   f.withHolders(st.noTTLTop.sorted()),
			Truncated:      st.truncated,
			Complete:       st.err == nil && (passDone || capped),
			Err:            st.err,
			Duration:       dur,
		})
	}
	res.Up = reached && f.nodeErr == nil && failed < len(f.ns)
	switch {
	case res.Up:
	case res.Err != nil:
	case !reached:
		res.Err = ErrNoAnswer
	default:
		res.Err = fmt.Errorf("%w: %w", errAllNamespacesFailed, f.ns[0].err)
	}
	return res
}
