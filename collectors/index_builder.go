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
	// add records one inspected batch, fence keys read for their expiry among its keys; at is
	// the server time (ms) taken before it was sent.
	add(b *batch, replies []keyReply, idleKnown bool, at int64)
	// expireTime says whether the inspector reads PEXPIRETIME.
	expireTime() bool
	// now is the server's time, ms.
	now() int64
}

// indexBuilder receives a walk's keys (a pass with sink set) into a new index. On a rebuild
// (a resync) the index served meanwhile is its base: a key the walk reads as the base holds it
// (membership, type, expiry) is stamped in the base, with its fresher idle time, and only the
// keys read otherwise go to idx; result merges the two and drops the base's keys the walk did
// not read. Scrapes during the resync serve the base's figures unchanged, and the exporter
// holds one index plus the changes instead of two whole indexes (the memory peak of a resync
// at the index key budget: docs/exporter.md, "Cost").
type indexBuilder struct {
	clock      *serverClock
	absolute   bool
	namespaces []Namespace

	mu  sync.Mutex
	idx *keyIndex // every key read on a first build; on a rebuild those the base lacks or holds otherwise
	// base is the index served during the rebuild (nil on a first build), guarded by baseMu
	// (the node's syncMu, taken before mu); epoch stamps the base entries the walk read as
	// they are.
	base   *keyIndex
	baseMu sync.Locker
	epoch  uint32
}

func newIndexBuilder(clock *serverClock, absolute bool, namespaces []Namespace, base *keyIndex, baseMu sync.Locker) *indexBuilder {
	b := &indexBuilder{clock: clock, absolute: absolute, namespaces: namespaces, idx: newKeyIndex(), base: base, baseMu: baseMu}
	if base != nil {
		// A new epoch per build, kept in the base at once: stamps of a build that failed must
		// not pass for this one's.
		baseMu.Lock()
		base.epoch++
		b.epoch = base.epoch
		baseMu.Unlock()
	}
	return b
}

func (b *indexBuilder) expireTime() bool { return b.absolute }
func (b *indexBuilder) now() int64       { return b.clock.now() }

func (b *indexBuilder) add(bt *batch, replies []keyReply, idleKnown bool, at int64) {
	st := readStamp{at: at, idleKnown: idleKnown, absolute: b.absolute, namespaces: b.namespaces}
	b.lock()
	defer b.unlock()
	for k := range replies {
		if replies[k].err != nil {
			continue // the pass marks the namespace failed, and the build with it
		}
		e, keep := entryOf(maskOf(bt.ns[bt.off[k]:bt.off[k+1]]), &replies[k], st)
		b.record(bt.keys[k], e, keep)
	}
}

func (b *indexBuilder) lock() {
	if b.base != nil {
		b.baseMu.Lock()
	}
	b.mu.Lock()
}

func (b *indexBuilder) unlock() {
	b.mu.Unlock()
	if b.base != nil {
		b.baseMu.Unlock()
	}
}

// record notes one reading of key: e, or gone when keep is false. SCAN may return a key twice,
// so a later reading undoes an earlier one.
func (b *indexBuilder) record(key string, e indexEntry, keep bool) {
	if b.base == nil {
		if keep {
			b.idx.set(key, e)
		} else {
			b.idx.remove(key)
		}
		return
	}
	e.epoch = b.epoch
	old, had := b.base.get(key)
	switch {
	case keep && had && !differs(old, e, b.absolute):
		b.base.set(key, e)
		b.idx.remove(key)
	case keep:
		b.idx.set(key, e)
	default:
		b.idx.remove(key)
		if had && old.epoch == b.epoch {
			old.epoch--
			b.base.set(key, old)
		}
	}
}

// result is the built index; on a rebuild the base, changed in place: the walk's other readings
// set, and the keys it did not read removed. baseMu is held.
func (b *indexBuilder) result() *keyIndex {
	if b.base == nil {
		return b.idx
	}
	x := b.base
	for k, e := range x.keys.all() {
		if e.epoch != b.epoch {
			x.remove(k)
		}
	}
	for k, e := range b.idx.keys.all() {
		x.set(k, *e)
	}
	x.epoch, b.idx = b.epoch, nil
	return x
}

func maskOf(ns []int32) uint64 {
	var m uint64
	for _, i := range ns {
		m |= 1 << i
	}
	return m
}

// isFenceKey reports whether key is counted apart as a fence key, read for its expiry alone.
func isFenceKey(key string) bool { return lockkeys.KindOf(key) == lockkeys.FenceCompanion }
