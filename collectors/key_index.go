package collectors

import (
	"math/bits"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// maxIndexedNamespaces is how many namespaces one index serves: an indexed key records the
// namespaces it belongs to in one 64-bit mask.
const maxIndexedNamespaces = 64

// keyIndex is one node's lock keys, as last read: for every key some indexed namespace matches,
// what a walk would learn from it (type, expiry, idle time), so that a scrape can aggregate from
// memory. Times are Unix milliseconds on the server's clock, so a TTL computed at scrape time
// (expireAt minus the server's TIME) is exact between reads: an expiry only changes through a
// command, which the change feed reports.
type keyIndex struct {
	keys index.KeyStore
	// epoch is the backstop walk in progress; every entry written carries it, so that at the
	// walk's end an entry of an older epoch was neither seen by the walk nor re-read since.
	epoch uint32
	// perNamespace counts, for each indexed namespace's bit, the entries whose mask has it:
	// what the key budget weighs the namespaces by (index_budget.go).
	perNamespace [maxIndexedNamespaces]int
}

// Value type codes of an indexEntry.
const (
	typeCodeString uint8 = iota
	typeCodeHash
	typeCodeOther
)

func typeCode(t string) uint8 {
	switch t {
	case TypeString:
		return typeCodeString
	case TypeHash:
		return typeCodeHash
	}
	return typeCodeOther
}

func typeName(c uint8) string {
	switch c {
	case typeCodeString:
		return TypeString
	case typeCodeHash:
		return TypeHash
	}
	return "other"
}

func newKeyIndex() *keyIndex { return &keyIndex{} }

// get, set, remove and len are the index's map operations; set and remove keep the counts
// per namespace.
func (x *keyIndex) get(key string) (index.Entry, bool) { return x.keys.Get(key) }
func (x *keyIndex) len() int                           { return x.keys.Len() }

func (x *keyIndex) set(key string, e index.Entry) {
	if old, had := x.keys.Set(key, e); had {
		x.count(old.Mask, -1)
	}
	x.count(e.Mask, 1)
}

func (x *keyIndex) remove(key string) bool {
	old, had := x.keys.Take(key)
	if had {
		x.count(old.Mask, -1)
	}
	return had
}

// count adds d to the count of every namespace in mask.
func (x *keyIndex) count(mask uint64, d int) {
	for m := mask; m != 0; m &= m - 1 {
		x.perNamespace[bits.TrailingZeros64(m)] += d
	}
}

// readStamp is when a batch of keys was read, on the server's clock.
type readStamp struct {
	at         int64 // server ms, taken just before the pipeline was sent
	idleKnown  bool
	absolute   bool // replies carry PEXPIRETIME
	namespaces []walk.Namespace
}

// apply records one key's reply; ns is the mask of indexed namespaces whose pattern matches it.
// It reports whether the entry changed (the backstop walk counts those as corrections).
func (x *keyIndex) apply(key string, ns uint64, r *walk.KeyReply, st readStamp) bool {
	old, had := x.keys.Get(key)
	e, keep := entryOf(ns, r, st)
	if !keep {
		x.remove(key)
		return had
	}
	e.Epoch = x.epoch
	x.set(key, e)
	return !had || differs(old, e, st.absolute)
}

// entryOf is the entry a reply describes, and keep false when the key is not indexed (gone, or a
// type no namespace of the mask counts). A fence key's entry holds its expiry alone: every
// namespace of the mask counts it, whatever its type.
func entryOf(ns uint64, r *walk.KeyReply, st readStamp) (e index.Entry, keep bool) {
	switch {
	case r.Gone, ns == 0:
		// A key no indexed namespace holds (all of them walked for the key budget) is not kept.
		return e, false
	case r.Fence:
		e = index.Entry{Mask: ns, Fence: true}
	case !wantedByAny(ns, r.Type, st.namespaces):
		return e, false
	default:
		e = index.Entry{Mask: ns, Type: typeCode(r.Type), Acquired: r.AcquiredAt}
	}
	switch {
	case r.Info.TTL == walk.NoTTL:
	case st.absolute && r.ExpireAt > 0:
		e.ExpireAt = r.ExpireAt
	default:
		e.ExpireAt = st.at + r.Info.TTL.Milliseconds()
	}
	if st.idleKnown && !r.Fence {
		e.Touched = st.at - r.Info.Idle.Milliseconds()
	}
	return e, true
}

// expirySlack is how far apart two readings of one expiry may be without PEXPIRETIME: read time
// + PTTL carries the pipeline's timing as its error.
const expirySlack = 50 // ms

// differs reports whether b says something of the key that a did not: membership, type, kind,
// expiry (exactly with PEXPIRETIME), or acquisition. Idle time is not compared: reads change it.
func differs(a, b index.Entry, absolute bool) bool {
	if a.Mask != b.Mask || a.Type != b.Type || a.Fence != b.Fence || a.Acquired != b.Acquired || (a.ExpireAt == 0) != (b.ExpireAt == 0) {
		return true
	}
	d := a.ExpireAt - b.ExpireAt
	if absolute {
		return d != 0
	}
	return d > expirySlack || d < -expirySlack
}

// wantedByAny reports whether some namespace in the mask counts keys of type typ.
func wantedByAny(ns uint64, typ string, namespaces []walk.Namespace) bool {
	for m := ns; m != 0; m &= m - 1 {
		if namespaces[bits.TrailingZeros64(m)].Wants(typ) {
			return true
		}
	}
	return false
}

// dropNamespace removes namespace bit b from every entry (a namespace past the key budget goes
// back to the walk), and entries left in no namespace.
func (x *keyIndex) dropNamespace(b int) {
	if x.perNamespace[b] == 0 {
		return
	}
	for k, e := range x.keys.All() {
		if e.Mask&(1<<b) == 0 {
			continue
		}
		if e.Mask &^= 1 << b; e.Mask == 0 {
			x.keys.Remove(k) // its count was b's alone
		}
	}
	x.perNamespace[b] = 0
}

// indexAggregate is one namespace's figures from the index, before the idle re-read.
type indexAggregate struct {
	keys, noTTL, fence int64
	minTTL             time.Duration
	hasTTL             bool
	top, noTTLTop      *walk.TopK // candidates by estimated idle time (an upper bound, see idleEstimate)
}

// idleEstimate is the key's idle time now if nothing touched it since it was read: an upper
// bound of the truth (to OBJECT IDLETIME's one-second resolution), because a read touches a key
// without a change-feed message and can only make it fresher.
func idleEstimate(e *index.Entry, now int64) time.Duration {
	return time.Duration(now-e.Touched) * time.Millisecond
}

// aggregate computes every namespace's counts and minimum TTL as of now (server ms), and keeps
// the m stalest keys by estimate per namespace as candidates for the exact idle re-read. Keys
// whose expiry has passed are left out: Redis has not deleted them yet, but any command would
// find them gone, as a walk's PTTL does.
func (x *keyIndex) aggregate(namespaces []walk.Namespace, now int64, m int) []indexAggregate {
	out := make([]indexAggregate, len(namespaces))
	for i := range out {
		out[i].top, out[i].noTTLTop = walk.NewTopK(m, true), walk.NewTopK(m, true)
	}
	for key, e := range x.keys.All() {
		if e.ExpireAt != 0 && e.ExpireAt < now { // Redis: expired once now > when
			continue
		}
		for mask := e.Mask; mask != 0; mask &= mask - 1 {
			a := &out[bits.TrailingZeros64(mask)]
			if e.Fence {
				a.fence++
				continue
			}
			if !namespaces[bits.TrailingZeros64(mask)].Wants(typeName(e.Type)) {
				continue
			}
			a.keys++
			ki := walk.KeyInfo{Key: key, TTL: walk.NoTTL, Idle: idleEstimate(e, now)}
			if e.ExpireAt == 0 {
				a.noTTL++
				a.noTTLTop.Offer(ki)
			} else {
				ki.TTL = time.Duration(e.ExpireAt-now) * time.Millisecond
				if !a.hasTTL || ki.TTL < a.minTTL {
					a.minTTL, a.hasTTL = ki.TTL, true
				}
			}
			a.top.Offer(ki)
		}
	}
	return out
}

// heldAggregate is one namespace's hold ages from the index, as a walk's nsState keeps them.
type heldAggregate struct {
	max time.Duration
	has bool
	top *walk.TopK // longest held first
}

// heldAges computes every namespace's longest hold and top-K by hold age as of now (server ms),
// over the keys aggregate counts (not expired, not a fence key, a type the namespace counts).
// It returns nil, without a look at the entries, when no namespace declares ExpectedMaxHold:
// then no entry carries an acquisition time.
func (x *keyIndex) heldAges(namespaces []walk.Namespace, now int64, k int, full, fromFeed bool) []heldAggregate {
	declared := false
	for _, ns := range namespaces {
		declared = declared || ns.ReadsHolders
	}
	if !declared {
		return nil
	}
	out := make([]heldAggregate, len(namespaces))
	for i := range out {
		out[i].top = walk.NewTopKBy(k, full, walk.LongerHeld)
	}
	for key, e := range x.keys.All() {
		since := heldSince(e, fromFeed)
		if since == 0 || e.Fence || e.ExpireAt != 0 && e.ExpireAt < now {
			continue
		}
		held := max(0, time.Duration(now-since)*time.Millisecond)
		for mask := e.Mask; mask != 0; mask &= mask - 1 {
			b := bits.TrailingZeros64(mask)
			if !namespaces[b].Wants(typeName(e.Type)) {
				continue
			}
			a := &out[b]
			if !a.has || held > a.max {
				a.max, a.has = held, true
			}
			a.top.Offer(walk.KeyInfo{Key: key, TTL: ttlAt(*e, now), Held: held, HasHeld: true})
		}
	}
	return out
}

// ttlAt is the entry's remaining TTL at now (server ms), or NoTTL.
func ttlAt(e index.Entry, now int64) time.Duration {
	if e.ExpireAt == 0 {
		return walk.NoTTL
	}
	return time.Duration(e.ExpireAt-now) * time.Millisecond
}

// heldSince is when the entry's hold began, for its hold age: the lease holder record's
// acquisition time where read, else (fromFeed) when the feed saw the hold begin; 0 when neither
// is known (a hold that began before the index was built) or the hold ended.
func heldSince(e *index.Entry, fromFeed bool) int64 {
	if e.Acquired != 0 || !fromFeed || e.Ended {
		return e.Acquired
	}
	return e.Began
}
