package collectors

import (
	"sync"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// serverClock converts the exporter's clock to the server's, from the offset measured at the
// node's last TIME: the index keeps server times, so that a TTL from PEXPIRETIME and the scrape's
// TIME compare on one clock whatever the skew between the hosts.
type serverClock struct {
	mu     sync.Mutex
	offset int64 // server ms − local ms
}

func (c *serverClock) now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UnixMilli() + c.offset
}

// set records the server's TIME (ms) read between the local times sent and received.
func (c *serverClock) set(server int64, sent, received time.Time) {
	mid := sent.UnixMilli() + received.Sub(sent).Milliseconds()/2
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = server - mid
}

// keySink receives every key a pass reads: the index's build and its backstop walk are passes.
type keySink interface {
	// add records one inspected batch; at is the server time (ms) taken before it was sent.
	add(b *batch, replies []keyReply, idleKnown bool, at int64)
	// fence records a fence key the walk counted (a walk does not inspect them).
	fence(key string, matches []int32)
	// expireTime says whether the inspector reads PEXPIRETIME.
	expireTime() bool
	// now is the server's time, ms.
	now() int64
}

// indexBuilder receives a walk's keys (a pass with sink set) into a new index.
type indexBuilder struct {
	clock      *serverClock
	absolute   bool
	namespaces []Namespace

	mu  sync.Mutex
	idx *keyIndex
}

func newIndexBuilder(clock *serverClock, absolute bool, namespaces []Namespace) *indexBuilder {
	return &indexBuilder{clock: clock, absolute: absolute, namespaces: namespaces, idx: newKeyIndex()}
}

func (b *indexBuilder) expireTime() bool { return b.absolute }
func (b *indexBuilder) now() int64       { return b.clock.now() }

func (b *indexBuilder) add(bt *batch, replies []keyReply, idleKnown bool, at int64) {
	st := readStamp{at: at, idleKnown: idleKnown, absolute: b.absolute, namespaces: b.namespaces}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range replies {
		if replies[k].err != nil {
			continue // the pass marks the namespace failed, and the build with it
		}
		b.idx.apply(bt.keys[k], maskOf(bt.ns[bt.off[k]:bt.off[k+1]]), &replies[k], st)
	}
}

func (b *indexBuilder) fence(key string, matches []int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idx.applyFence(key, maskOf(matches))
}

func maskOf(ns []int32) uint64 {
	var m uint64
	for _, i := range ns {
		m |= 1 << i
	}
	return m
}

// isFenceKey reports whether key is counted apart as a fence key rather than inspected.
func isFenceKey(key string) bool { return lockkeys.KindOf(key) == lockkeys.FenceCompanion }
