package collectors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// lfuIdleError is the start of the error Redis returns for OBJECT IDLETIME when the
// maxmemory-policy is an LFU policy (idle time is not tracked then).
const lfuIdleError = "ERR An LFU maxmemory policy is selected"

// nodeClient is what a scan needs from a connection to one Redis node (or one logical node,
// such as a Sentinel-managed master).
type nodeClient interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	ScanType(ctx context.Context, cursor uint64, match string, count int64, keyType string) *redis.ScanCmd
	DBSize(ctx context.Context) *redis.IntCmd
	Pipeline() redis.Pipeliner
}

// inspectWorkers is how many PTTL/OBJECT IDLETIME pipelines are in flight on a node at once,
// each on its own connection. While one pipeline's replies are decoded here, Redis executes
// another's commands and the next SCAN, so neither side waits for the other. Three kept Redis
// busier than two (scans 1.15-1.26x faster in BenchmarkScrape on 2 CPUs); beyond that, a
// single-threaded Redis gains nothing from more connections.
const inspectWorkers = 3

// classified is one SCAN reply sorted into namespaces: keys that match no namespace are dropped,
// and the namespaces of keys[k] are ns[off[k]:off[k+1]].
type classified struct {
	keys      []string
	companion []companionKind
	off       []int32
	ns        []int32
}

// sort classifies a SCAN reply into r, reusing r's slices.
func (c *classifier) sort(keys []string, r *classified) {
	r.keys, r.companion, r.off, r.ns = r.keys[:0], r.companion[:0], append(r.off[:0], 0), r.ns[:0]
	for _, key := range keys {
		before := len(r.ns)
		r.ns = c.classify(key, r.ns)
		if len(r.ns) == before {
			continue
		}
		r.keys = append(r.keys, key)
		r.companion = append(r.companion, companionOf(key))
		r.off = append(r.off, int32(len(r.ns)))
	}
}

// batch is up to BatchSize keys to inspect, each with the namespaces it was admitted to, in the
// same layout as classified.
type batch struct {
	keys []string
	off  []int32
	ns   []int32
}

func newBatch(size int) *batch {
	return &batch{keys: make([]string, 0, size), off: append(make([]int32, 0, size+1), 0), ns: make([]int32, 0, size)}
}

// scanNode makes the flight's one pass over a node's keyspace: a single SCAN cursor whose keys
// are classified here, and inspectWorkers pipelines that read PTTL, OBJECT IDLETIME (and TYPE,
// when the server did not filter by type) for the keys some namespace wants.
func (s *Scanner) scanNode(f *flight, c nodeClient) {
	n := f.startNode(nodeAddr(c))
	if size, err := s.dbSize(f, c); err == nil {
		f.answered(n)
		f.addKeyspace(size)
	}
	typed := f.cls.stringsOnly && s.typeScan.usable(c)
	batches := make(chan *batch, inspectWorkers)
	var noIdle atomic.Bool // per node: the maxmemory-policy is a per-server setting
	var wg sync.WaitGroup
	for range inspectWorkers {
		wg.Go(func() {
			in := &inspector{c: c, noIdle: &noIdle}
			for b := range batches {
				if f.ctx.Err() != nil {
					continue // drain: the producer stops at its next send
				}
				s.inspectBatch(f, n, in, b, !typed)
			}
		})
	}
	finished := s.walk(f, c, n, &typed, batches)
	close(batches)
	wg.Wait()
	if finished {
		f.nodeDone()
	}
}

func (s *Scanner) dbSize(f *flight, c nodeClient) (int64, error) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	return c.DBSize(ctx).Result()
}

// walk hands the keys of the node's SCAN loop, once admitted, to the workers in batches of at
// most BatchSize. It reports whether the pass reached the end of the keyspace (or every
// namespace's cap) without a node failure.
func (s *Scanner) walk(f *flight, c nodeClient, n *node, typed *bool, batches chan<- *batch) bool {
	size := f.opts.BatchSize
	var reply classified
	b := newBatch(size)
	send := func() bool {
		if len(b.keys) == 0 {
			return true
		}
		select {
		case batches <- b:
			b = newBatch(size)
			return true
		case <-f.ctx.Done():
			return false
		}
	}
	replies := make(chan scanReply, 1)
	stop := make(chan struct{})
	var fetcher sync.WaitGroup
	fetcher.Go(func() { s.fetch(f, c, n, typed, replies, stop) })
	defer func() {
		close(stop)
		fetcher.Wait() // a SCAN in flight ends by its command deadline
	}()
	for r := range replies {
		if r.err != nil {
			f.failNode(r.err)
			return false
		}
		f.cls.sort(r.keys, &reply)
		capsReached := false
		for from := 0; from < len(reply.keys); {
			from, capsReached = f.admit(&reply, from, b, size)
			if len(b.keys) >= size && !send() {
				return false
			}
		}
		if capsReached || r.last {
			return send()
		}
	}
	return false // the pass was cut: fetch stopped at the deadline
}

// scanReply is one SCAN reply of the node, or the error that ended the loop.
type scanReply struct {
	keys []string
	last bool // the cursor came back to 0
	err  error
}

// fetch runs the node's SCAN loop one reply ahead of walk, so that classifying a reply and
// admitting its keys is off the critical path of the cursor chain: Redis can run the next SCAN
// while the exporter sorts the last one. It closes out when the loop ends, at the deadline, or
// when walk closes stop.
func (s *Scanner) fetch(f *flight, c nodeClient, n *node, typed *bool, out chan<- scanReply, stop <-chan struct{}) {
	defer close(out)
	var cursor uint64
	for f.ctx.Err() == nil {
		keys, next, err := s.scanOnce(f, c, cursor, *typed)
		if err != nil && *typed && s.typeScan.refused(c, err) {
			*typed = false // this node has no SCAN ... TYPE: filter by TYPE per key instead
			continue
		}
		r := scanReply{keys: keys, last: next == 0, err: err}
		if err == nil {
			if *typed {
				s.typeScan.confirm(c)
			}
			f.scanned(n, len(keys))
		}
		select {
		case out <- r:
		case <-stop:
			return
		case <-f.ctx.Done():
			return
		}
		if err != nil || r.last {
			return
		}
		cursor = next
	}
}

func (s *Scanner) scanOnce(f *flight, c nodeClient, cursor uint64, typed bool) ([]string, uint64, error) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	count := int64(f.opts.BatchSize)
	if typed {
		return c.ScanType(ctx, cursor, f.cls.match, count, TypeString).Result()
	}
	return c.Scan(ctx, cursor, f.cls.match, count).Result()
}

// inspectBatch inspects one batch and folds it into the flight. An error on a key marks the
// namespaces that key belongs to, and no other.
func (s *Scanner) inspectBatch(f *flight, n *node, in *inspector, b *batch, withType bool) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	replies, idleKnown := in.inspect(ctx, b.keys, withType)
	if len(replies) > 0 && !isConnectionError(replies[len(replies)-1].err) {
		f.answered(n) // the last reply came back, so Redis answered the whole pipeline
	}
	if !idleKnown {
		f.idleUnavailable()
	}
	for k, r := range replies {
		if r.err == nil {
			continue
		}
		for _, i := range b.ns[b.off[k]:b.off[k+1]] {
			f.failNamespace(int(i), r.err)
		}
	}
	f.merge(b, replies, idleKnown)
}

// merge folds one inspected batch into the namespaces its keys were admitted to.
func (f *flight) merge(b *batch, replies []keyReply, idleKnown bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, r := range replies {
		for _, i := range b.ns[b.off[k]:b.off[k+1]] {
			st := f.ns[i]
			st.inspected++
			if r.err == nil && !r.gone && f.opts.Namespaces[i].wants(r.typ) {
				st.merge(r.info, idleKnown)
			}
		}
	}
}

// isConnectionError reports whether err is no answer from the server (a network or timeout
// error, or none at all) rather than nil or an error reply.
func isConnectionError(err error) bool {
	if err == nil {
		return false
	}
	var rerr redis.Error
	return !errors.As(err, &rerr) && !errors.Is(err, redis.Nil)
}

// typeSupport remembers, per node address, whether the server refused SCAN ... TYPE (Redis
// before 6.0): the first refusal switches that node to TYPE per key for the Scanner's lifetime.
type typeSupport struct {
	mu        sync.Mutex
	confirmed map[string]bool
	refusedBy map[string]bool
}

func newTypeSupport() *typeSupport {
	return &typeSupport{confirmed: map[string]bool{}, refusedBy: map[string]bool{}}
}

func nodeAddr(c nodeClient) string {
	if o, ok := c.(interface{ Options() *redis.Options }); ok {
		return o.Options().Addr
	}
	return ""
}

func (t *typeSupport) usable(c nodeClient) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.refusedBy[nodeAddr(c)]
}

func (t *typeSupport) confirm(c nodeClient) {
	addr := nodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.confirmed[addr] = true
}

// refused reports whether err is a server refusing the TYPE argument: an error reply to a node's
// first SCAN ... TYPE. Once a node has answered one, its errors are errors.
func (t *typeSupport) refused(c nodeClient, err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) || !strings.HasPrefix(err.Error(), "ERR") {
		return false
	}
	addr := nodeAddr(c)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.confirmed[addr] {
		return false
	}
	t.refusedBy[addr] = true
	return true
}

// keyReply is what the inspection of one key found.
type keyReply struct {
	info KeyInfo
	typ  string
	gone bool  // expired or deleted since SCAN returned it
	err  error // the first command error on the key
}

// inspector pipelines PTTL, OBJECT IDLETIME and, where needed, TYPE for batches of keys, for
// one worker. Its slices are reused from batch to batch: at a thousand keys a batch they were a
// large share of a scan's allocations, and the garbage collector's work competed with Redis for
// the CPU.
type inspector struct {
	c       nodeClient
	noIdle  *atomic.Bool // shared by the node's workers: set once the node refused OBJECT IDLETIME
	ttls    []*redis.DurationCmd
	idles   []*redis.DurationCmd
	types   []*redis.StatusCmd
	replies []keyReply
}

// inspect pipelines the commands for keys and returns one reply per key, valid until the next
// call. None of the commands touches the key, so the scan does not disturb the idle time it
// measures, and none reads the value (the owner's token).
func (in *inspector) inspect(ctx context.Context, keys []string, withType bool) (replies []keyReply, idleKnown bool) {
	wantIdle := !in.noIdle.Load()
	pipe := in.c.Pipeline()
	in.ttls, in.idles, in.types = in.ttls[:0], in.idles[:0], in.types[:0]
	for _, k := range keys {
		in.ttls = append(in.ttls, pipe.PTTL(ctx, k))
		if wantIdle {
			in.idles = append(in.idles, pipe.ObjectIdleTime(ctx, k))
		}
		if withType {
			in.types = append(in.types, pipe.Type(ctx, k))
		}
	}
	// Exec's error is the first failed command's; each command is judged on its own below,
	// because a vanished key (nil reply) is not a failure and an error on one key (NOPERM, say)
	// concerns only that key's namespaces.
	_, _ = pipe.Exec(ctx)

	idleKnown = wantIdle
	if wantIdle {
		for _, cmd := range in.idles {
			if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), lfuIdleError) {
				in.noIdle.Store(true)
				idleKnown = false
				break
			}
		}
	}
	replies = in.replies[:0]
	for j, k := range keys {
		replies = append(replies, in.reply(j, k, idleKnown, withType))
	}
	in.replies = replies
	return replies, idleKnown
}

func (in *inspector) reply(j int, key string, idleKnown, withType bool) keyReply {
	r := keyReply{info: KeyInfo{Key: key}, typ: TypeString}
	ttl, err := in.ttls[j].Result()
	if err != nil {
		r.err = err
		return r
	}
	// go-redis returns PTTL's -2 (no such key) and -1 (no expiry) as raw -2ns and -1ns, not
	// scaled to milliseconds like real TTLs.
	switch ttl {
	case -2:
		r.gone = true
		return r
	case -1:
		ttl = NoTTL
	}
	r.info.TTL = ttl
	if withType {
		typ, err := in.types[j].Result()
		if err != nil {
			r.err = err
			return r
		}
		if typ == "none" {
			r.gone = true
			return r
		}
		r.typ = typ
	}
	if idleKnown {
		idle, err := in.idles[j].Result()
		if errors.Is(err, redis.Nil) {
			r.gone = true // expired or deleted between the commands
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
		r.info.Idle = idle
	}
	return r
}
