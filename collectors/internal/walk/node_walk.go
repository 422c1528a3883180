package walk

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Batch is up to BatchSize keys to inspect, each with the namespaces it was admitted to, in the
// same layout as classified.
type Batch struct {
	Keys []string
	Off  []int32
	NS   []int32
}

func NewBatch(size int) *Batch {
	return &Batch{Keys: make([]string, 0, size), Off: append(make([]int32, 0, size+1), 0), NS: make([]int32, 0, size)}
}

// WalkNode walks one node's keyspace for the walk: a single SCAN cursor whose keys
// are classified here, and inspectWorkers pipelines that read PTTL, OBJECT IDLETIME (and TYPE,
// when the server did not filter by type) for the keys some namespace wants.
func (w *Walker) WalkNode(f *Run, c NodeClient) {
	n := f.startNode(NodeAddr(c))
	if size, err := w.dbSize(f, c); err == nil {
		f.answered(n)
		f.addKeyspace(size)
	}
	typed := f.cls.StringsOnly && w.typeScan.Usable(c)
	batches := make(chan *Batch, InspectWorkers)
	var noIdle atomic.Bool // per node: the maxmemory-policy is a per-server setting
	var wg sync.WaitGroup
	for range InspectWorkers {
		wg.Go(func() {
			in := &Inspector{c: c, noIdle: &noIdle, readHolder: f.cls.HolderReader(),
				expireTime: f.Sink != nil && f.Sink.ExpireTime(), fenceExpiry: f.Sink != nil}
			for b := range batches {
				if f.ctx.Err() != nil {
					continue // drain: the producer stops at its next send
				}
				w.inspectBatch(f, n, in, b, !typed)
			}
		})
	}
	finished := w.walk(f, c, n, &typed, batches)
	close(batches)
	wg.Wait()
	if finished {
		f.nodeDone()
	}
}

func (w *Walker) dbSize(f *Run, c NodeClient) (int64, error) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	return c.DBSize(ctx).Result()
}

// walk hands the keys of the node's SCAN loop, once admitted, to the workers in batches of at
// most BatchSize. It reports whether the walk reached the end of the keyspace (or every
// namespace's cap) without a node failure.
func (w *Walker) walk(f *Run, c NodeClient, n *node, typed *bool, batches chan<- *Batch) bool {
	size := f.opts.BatchSize
	var reply Classified
	b := NewBatch(size)
	send := func() bool {
		if len(b.Keys) == 0 {
			return true
		}
		select {
		case batches <- b:
			b = NewBatch(size)
			return true
		case <-f.ctx.Done():
			return false
		}
	}
	replies := make(chan scanReply, 1)
	stop := make(chan struct{})
	var fetcher sync.WaitGroup
	fetcher.Go(func() { w.fetch(f, c, n, typed, replies, stop) })
	defer func() {
		close(stop)
		fetcher.Wait() // a SCAN in flight ends by its command deadline
	}()
	for r := range replies {
		if r.err != nil {
			f.failNode(r.err)
			return false
		}
		f.cls.Sort(r.keys, &reply)
		capsReached := false
		for from := 0; from < len(reply.Keys); {
			from, capsReached = f.admit(&reply, from, b, size)
			if len(b.Keys) >= size && !send() {
				return false
			}
		}
		if capsReached || r.last {
			return send()
		}
	}
	return false // the walk was cut: fetch stopped at the deadline
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
func (w *Walker) fetch(f *Run, c NodeClient, n *node, typed *bool, out chan<- scanReply, stop <-chan struct{}) {
	defer close(out)
	var cursor uint64
	for f.ctx.Err() == nil {
		keys, next, err := w.scanOnce(f, c, cursor, *typed)
		if err != nil && *typed && w.typeScan.Refused(c, err) {
			*typed = false // this node has no SCAN ... TYPE: filter by TYPE per key instead
			continue
		}
		r := scanReply{keys: keys, last: next == 0, err: err}
		if err == nil {
			if *typed {
				w.typeScan.Confirm(c)
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
		if f.Pace > 0 {
			select {
			case <-time.After(f.Pace):
			case <-stop:
				return
			case <-f.ctx.Done():
				return
			}
		}
	}
}

func (w *Walker) scanOnce(f *Run, c NodeClient, cursor uint64, typed bool) ([]string, uint64, error) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	count := int64(f.opts.BatchSize)
	if typed {
		return c.ScanType(ctx, cursor, f.cls.Match, count, TypeString).Result()
	}
	return c.Scan(ctx, cursor, f.cls.Match, count).Result()
}

// inspectBatch inspects one batch and folds it into the walk. An error on a key marks the
// namespaces that key belongs to, and no other.
func (w *Walker) inspectBatch(f *Run, n *node, in *Inspector, b *Batch, withType bool) {
	ctx, cancel := f.commandContext(f.ctx)
	defer cancel()
	var at int64
	if f.Sink != nil {
		at = f.Sink.Now()
	}
	replies, idleKnown := in.Inspect(ctx, b.Keys, withType)
	if f.Sink != nil {
		f.Sink.Add(b, replies, idleKnown, at)
	}
	if len(replies) > 0 && !IsConnectionError(replies[len(replies)-1].Err) {
		f.answered(n) // the last reply came back, so Redis answered the whole pipeline
	}
	if !idleKnown {
		f.idleUnavailable()
	}
	for k, r := range replies {
		if r.Err == nil {
			continue
		}
		for _, i := range b.NS[b.Off[k]:b.Off[k+1]] {
			f.failNamespace(int(i), r.Err)
		}
	}
	f.merge(b, replies, idleKnown)
}

// IsConnectionError reports whether err is no answer from the server (a network or timeout
// error, or none at all) rather than nil or an error reply.
func IsConnectionError(err error) bool {
	if err == nil {
		return false
	}
	var rerr redis.Error
	return !errors.As(err, &rerr) && !errors.Is(err, redis.Nil)
}
