package index

import (
	"math/bits"
	"sync"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// Builder receives a walk's keys (a walk with sink set) into a new index. On a rebuild
// (a resync) the index served meanwhile is its base: a key the walk reads as the base holds it
// (membership, type, expiry) is stamped in the base, with its fresher idle time, and only the
// keys read otherwise go to idx; Result merges the two and drops the base's keys the walk did
// not read. Scrapes during the resync serve the base's figures unchanged, and the exporter
// holds one index plus the changes instead of two whole indexes (the memory peak of a resync
// at the index key budget: docs/exporter.md, "Cost").
type Builder struct {
	clock      *ServerClock
	absolute   bool
	namespaces []walk.Namespace

	mu  sync.Mutex
	idx *KeyIndex // every key read on a first build; on a rebuild those the base lacks or holds otherwise
	// base is the index served during the rebuild (nil on a first build), guarded by baseMu
	// (the node's syncMu, taken before mu); epoch stamps the base entries the walk read as
	// they are, stamped counts them (a key is stamped in the base or held in idx, never
	// both), in total and per namespace.
	base    *KeyIndex
	baseMu  sync.Locker
	epoch   uint32
	stamped BudgetCharge

	// The key budget holds during the build: the index built is charged to it as the node's
	// (owner's), and a namespace it sends to the walk is excluded: its keys are not recorded.
	budget  *KeyBudget
	owner   any // names the node in the budget
	Exclude uint64

	// ForgetHolds: the base's holds are not carried into the entries the walk reads as they
	// are (a resync after the data was replaced: SWAPDB, a restart, a failover), so that no
	// hold of another dataset keeps its beginning.
	ForgetHolds bool
}

func NewBuilder(clock *ServerClock, absolute bool, namespaces []walk.Namespace, base *KeyIndex, baseMu sync.Locker) *Builder {
	b := &Builder{clock: clock, absolute: absolute, namespaces: namespaces, idx: NewKeyIndex(), base: base, baseMu: baseMu}
	if base != nil {
		// A new epoch per build, kept in the base at once: stamps of a build that failed must
		// not pass for this one's.
		b.baseMu.Lock()
		base.Epoch++
		b.epoch = base.Epoch
		b.baseMu.Unlock()
	}
	return b
}

// ChargeTo makes the build hold to budget as owner's index: the namespaces it sends to the walk
// now are left out, and so are those it sends during the build.
func (b *Builder) ChargeTo(budget *KeyBudget, owner any) {
	b.budget, b.owner, b.Exclude = budget, owner, budget.OverMask()
}

func (b *Builder) ExpireTime() bool { return b.absolute }
func (b *Builder) Now() int64       { return b.clock.Now() }

func (b *Builder) Add(bt *walk.Batch, replies []walk.KeyReply, idleKnown bool, at int64) {
	st := ReadStamp{At: at, IdleKnown: idleKnown, Absolute: b.absolute, Namespaces: b.namespaces}
	b.lock()
	defer b.unlock()
	for k := range replies {
		if replies[k].Err != nil {
			continue // the walk marks the namespace failed, and the build with it
		}
		e, keep := EntryOf(MaskOf(bt.NS[bt.Off[k]:bt.Off[k+1]])&^b.Exclude, &replies[k], st)
		b.record(bt.Keys[k], e, keep)
		b.keepWithinBudget()
	}
}

func (b *Builder) lock() {
	if b.base != nil {
		b.baseMu.Lock()
	}
	b.mu.Lock()
}

func (b *Builder) unlock() {
	b.mu.Unlock()
	if b.base != nil {
		b.baseMu.Unlock()
	}
}

// record notes one reading of key: e, or gone when keep is false. SCAN may return a key twice,
// so a later reading undoes an earlier one.
func (b *Builder) record(key string, e Entry, keep bool) {
	if b.base == nil {
		if keep {
			b.idx.Set(key, e)
		} else {
			b.idx.Remove(key)
		}
		return
	}
	e.Epoch = b.epoch
	old, had := b.base.Get(key)
	switch {
	case keep && had && !Differs(old, e, b.absolute):
		if old.Epoch != b.epoch {
			b.stamp(e.Mask, 1)
		}
		if !b.ForgetHolds {
			e.KeepHold(old)
		}
		b.base.Set(key, e)
		b.idx.Remove(key)
	case keep:
		b.unstamp(key, old, had)
		b.idx.Set(key, e)
	default:
		b.idx.Remove(key)
		b.unstamp(key, old, had)
	}
}

// unstamp takes back the stamp of a base entry (old, had) that a later reading of key undid, or
// that an exclusion left in no namespace (the counts of excluded namespaces are already 0).
func (b *Builder) unstamp(key string, old Entry, had bool) {
	if had && old.Epoch == b.epoch {
		b.stamp(old.Mask&^b.Exclude, -1)
		old.Epoch--
		b.base.Set(key, old)
	}
}

// stamp counts d base entries of mask stamped.
func (b *Builder) stamp(mask uint64, d int) {
	b.stamped.Keys += d
	for m := mask; m != 0; m &= m - 1 {
		b.stamped.PerNamespace[bits.TrailingZeros64(m)] += d
	}
}

// keepWithinBudget charges the index built so far to the budget, and excludes from it every
// namespace the budget sends to the walk. b.mu is held.
func (b *Builder) keepWithinBudget() {
	for b.budget != nil {
		c := b.stamped
		c.Keys += b.idx.Len()
		for i, n := range b.idx.PerNamespace {
			c.PerNamespace[i] += n
		}
		drop := b.budget.Settle(b.owner, &c)
		if drop < 0 {
			return
		}
		b.excludeNamespace(drop)
	}
}

// excludeNamespace leaves namespace x out of the index built: its bit is removed from the keys
// read so far (at once from idx; from the base's stamped entries by result, since the base is
// served meanwhile), and a stamped entry of no other namespace loses its stamp. b.mu is held.
func (b *Builder) excludeNamespace(x int) {
	b.Exclude |= 1 << x
	b.idx.DropNamespace(x)
	if b.base == nil || b.stamped.PerNamespace[x] == 0 {
		return
	}
	for k, e := range b.base.All() {
		if e.Epoch == b.epoch && e.Mask&(1<<x) != 0 && e.Mask&^b.Exclude == 0 {
			b.unstamp(k, *e, true)
		}
	}
	b.stamped.PerNamespace[x] = 0
}

// result is the built index; on a rebuild the base, changed in place: the walk's other readings
// set, and the keys it did not read removed. Namespaces the budget excluded during the build
// are dropped from it. baseMu is held.
func (b *Builder) Result() *KeyIndex {
	x := b.idx
	if b.base != nil {
		x = b.base
		for k, e := range x.All() {
			if e.Epoch != b.epoch {
				x.Remove(k)
			}
		}
		for k, e := range b.idx.All() {
			x.Set(k, *e)
		}
		x.Epoch, b.idx = b.epoch, nil
	}
	for m := b.Exclude; m != 0; m &= m - 1 {
		x.DropNamespace(bits.TrailingZeros64(m))
	}
	return x
}

// MaskOf is the mask of the namespaces ns, as the walk lists a key's.
func MaskOf(ns []int32) uint64 {
	var m uint64
	for _, i := range ns {
		m |= 1 << i
	}
	return m
}
