package index

import (
	"iter"
	"math/bits"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// MaxNamespaces is how many namespaces one index serves: an indexed key records the
// namespaces it belongs to in one 64-bit mask.
const MaxNamespaces = 64

// KeyIndex is one node's lock keys, as last read: for every key some indexed namespace matches,
// what a walk would learn from it (type, expiry, idle time), so that a scrape can aggregate from
// memory. Times are Unix milliseconds on the server's clock, so a TTL computed at scrape time
// (expireAt minus the server's TIME) is exact between reads: an expiry only changes through a
// command, which the change feed reports.
type KeyIndex struct {
	keys KeyStore
	// epoch is the backstop walk in progress; every entry written carries it, so that at the
	// walk's end an entry of an older epoch was neither seen by the walk nor re-read since.
	Epoch uint32
	// PerNamespace counts, for each indexed namespace's bit, the entries whose mask has it:
	// what the key budget weighs the namespaces by (index_budget.go).
	PerNamespace [MaxNamespaces]int
}

// Value type codes of an indexEntry.
const (
	TypeCodeString uint8 = iota
	TypeCodeHash
	TypeCodeOther
)

// TypeCode is the type code of a TYPE reply.
func TypeCode(t string) uint8 {
	switch t {
	case walk.TypeString:
		return TypeCodeString
	case walk.TypeHash:
		return TypeCodeHash
	}
	return TypeCodeOther
}

// TypeName is the TYPE reply a type code stands for.
func TypeName(c uint8) string {
	switch c {
	case TypeCodeString:
		return walk.TypeString
	case TypeCodeHash:
		return walk.TypeHash
	}
	return "other"
}

func NewKeyIndex() *KeyIndex { return &KeyIndex{} }

// Get, set, remove and len are the index's map operations; set and remove keep the counts
// per namespace.
func (x *KeyIndex) Get(key string) (Entry, bool) { return x.keys.Get(key) }
func (x *KeyIndex) Len() int                     { return x.keys.Len() }

// All yields every key and its entry; a change of an entry's mask goes through Set, which
// keeps the counts per namespace.
func (x *KeyIndex) All() iter.Seq2[string, *Entry] { return x.keys.All() }

func (x *KeyIndex) Set(key string, e Entry) {
	if old, had := x.keys.Set(key, e); had {
		x.count(old.Mask, -1)
	}
	x.count(e.Mask, 1)
}

func (x *KeyIndex) Remove(key string) bool {
	old, had := x.keys.Take(key)
	if had {
		x.count(old.Mask, -1)
	}
	return had
}

// count adds d to the count of every namespace in mask.
func (x *KeyIndex) count(mask uint64, d int) {
	for m := mask; m != 0; m &= m - 1 {
		x.PerNamespace[bits.TrailingZeros64(m)] += d
	}
}

// ReadStamp is when a batch of keys was read, on the server's clock.
type ReadStamp struct {
	At         int64 // server ms, taken just before the pipeline was sent
	IdleKnown  bool
	Absolute   bool // replies carry PEXPIRETIME
	Namespaces []walk.Namespace
}

// Apply records one key's reply; ns is the mask of indexed namespaces whose pattern matches it.
// It reports whether the entry changed (the backstop walk counts those as corrections).
func (x *KeyIndex) Apply(key string, ns uint64, r *walk.KeyReply, st ReadStamp) bool {
	old, had := x.keys.Get(key)
	e, keep := EntryOf(ns, r, st)
	if !keep {
		x.Remove(key)
		return had
	}
	e.Epoch = x.Epoch
	x.Set(key, e)
	return !had || Differs(old, e, st.Absolute)
}

// EntryOf is the entry a reply describes, and keep false when the key is not indexed (gone, or a
// type no namespace of the mask counts). A fence key's entry holds its expiry alone: every
// namespace of the mask counts it, whatever its type.
func EntryOf(ns uint64, r *walk.KeyReply, st ReadStamp) (e Entry, keep bool) {
	switch {
	case r.Gone, ns == 0:
		// A key no indexed namespace holds (all of them walked for the key budget) is not kept.
		return e, false
	case r.Fence:
		e = Entry{Mask: ns, Fence: true}
	case !wantedByAny(ns, r.Type, st.Namespaces):
		return e, false
	default:
		e = Entry{Mask: ns, Type: TypeCode(r.Type), Acquired: r.AcquiredAt}
	}
	switch {
	case r.Info.TTL == walk.NoTTL:
	case st.Absolute && r.ExpireAt > 0:
		e.ExpireAt = r.ExpireAt
	default:
		e.ExpireAt = st.At + r.Info.TTL.Milliseconds()
	}
	if st.IdleKnown && !r.Fence {
		e.Touched = st.At - r.Info.Idle.Milliseconds()
	}
	return e, true
}

// ExpirySlack is how far apart two readings of one expiry may be without PEXPIRETIME: read time
// + PTTL carries the pipeline's timing as its error.
const ExpirySlack = 50 // ms

// Differs reports whether b says something of the key that a did not: membership, type, kind,
// expiry (exactly with PEXPIRETIME), or acquisition. Idle time is not compared: reads change it.
func Differs(a, b Entry, absolute bool) bool {
	if a.Mask != b.Mask || a.Type != b.Type || a.Fence != b.Fence || a.Acquired != b.Acquired || (a.ExpireAt == 0) != (b.ExpireAt == 0) {
		return true
	}
	d := a.ExpireAt - b.ExpireAt
	if absolute {
		return d != 0
	}
	return d > ExpirySlack || d < -ExpirySlack
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

// DropNamespace removes namespace bit b from every entry (a namespace past the key budget goes
// back to the walk), and entries left in no namespace.
func (x *KeyIndex) DropNamespace(b int) {
	if x.PerNamespace[b] == 0 {
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
	x.PerNamespace[b] = 0
}

// NamespaceAggregate is one namespace's figures from the index, before the idle re-read.
type NamespaceAggregate struct {
	Keys, NoTTL, Fence int64
	MinTTL             time.Duration
	HasTTL             bool
	Top, NoTTLTop      *walk.TopK // candidates by estimated idle time (an upper bound, see idleEstimate)
}

// idleEstimate is the key's idle time now if nothing touched it since it was read: an upper
// bound of the truth (to OBJECT IDLETIME's one-second resolution), because a read touches a key
// without a change-feed message and can only make it fresher.
func idleEstimate(e *Entry, now int64) time.Duration {
	return time.Duration(now-e.Touched) * time.Millisecond
}

// Aggregate computes every namespace's counts and minimum TTL as of now (server ms), and keeps
// the m stalest keys by estimate per namespace as candidates for the exact idle re-read. Keys
// whose expiry has passed are left out: Redis has not deleted them yet, but any command would
// find them gone, as a walk's PTTL does.
func (x *KeyIndex) Aggregate(namespaces []walk.Namespace, now int64, m int) []NamespaceAggregate {
	out := make([]NamespaceAggregate, len(namespaces))
	for i := range out {
		out[i].Top, out[i].NoTTLTop = walk.NewTopK(m, true), walk.NewTopK(m, true)
	}
	for key, e := range x.keys.All() {
		if e.ExpireAt != 0 && e.ExpireAt < now { // Redis: expired once now > when
			continue
		}
		for mask := e.Mask; mask != 0; mask &= mask - 1 {
			a := &out[bits.TrailingZeros64(mask)]
			if e.Fence {
				a.Fence++
				continue
			}
			if !namespaces[bits.TrailingZeros64(mask)].Wants(TypeName(e.Type)) {
				continue
			}
			a.Keys++
			ki := walk.KeyInfo{Key: key, TTL: walk.NoTTL, Idle: idleEstimate(e, now)}
			if e.ExpireAt == 0 {
				a.NoTTL++
				a.NoTTLTop.Offer(ki)
			} else {
				ki.TTL = time.Duration(e.ExpireAt-now) * time.Millisecond
				if !a.HasTTL || ki.TTL < a.MinTTL {
					a.MinTTL, a.HasTTL = ki.TTL, true
				}
			}
			a.Top.Offer(ki)
		}
	}
	return out
}

// HeldAggregate is one namespace's hold ages from the index, as a walk's nsState keeps them.
type HeldAggregate struct {
	Max time.Duration
	Has bool
	Top *walk.TopK // longest held first
}

// HeldAges computes every namespace's longest hold and top-K by hold age as of now (server ms),
// over the keys aggregate counts (not expired, not a fence key, a type the namespace counts).
// It returns nil, without a look at the entries, when no namespace declares ExpectedMaxHold:
// then no entry carries an acquisition time.
func (x *KeyIndex) HeldAges(namespaces []walk.Namespace, now int64, k int, full, fromFeed bool) []HeldAggregate {
	declared := false
	for _, ns := range namespaces {
		declared = declared || ns.ReadsHolders
	}
	if !declared {
		return nil
	}
	out := make([]HeldAggregate, len(namespaces))
	for i := range out {
		out[i].Top = walk.NewTopKBy(k, full, walk.LongerHeld)
	}
	for key, e := range x.keys.All() {
		since := HeldSince(e, fromFeed)
		if since == 0 || e.Fence || e.ExpireAt != 0 && e.ExpireAt < now {
			continue
		}
		held := max(0, time.Duration(now-since)*time.Millisecond)
		for mask := e.Mask; mask != 0; mask &= mask - 1 {
			b := bits.TrailingZeros64(mask)
			if !namespaces[b].Wants(TypeName(e.Type)) {
				continue
			}
			a := &out[b]
			if !a.Has || held > a.Max {
				a.Max, a.Has = held, true
			}
			a.Top.Offer(walk.KeyInfo{Key: key, TTL: ttlAt(*e, now), Held: held, HasHeld: true})
		}
	}
	return out
}

// ttlAt is the entry's remaining TTL at now (server ms), or NoTTL.
func ttlAt(e Entry, now int64) time.Duration {
	if e.ExpireAt == 0 {
		return walk.NoTTL
	}
	return time.Duration(e.ExpireAt-now) * time.Millisecond
}

// HeldSince is when the entry's hold began, for its hold age: the lease holder record's
// acquisition time where read, else (fromFeed) when the feed saw the hold begin; 0 when neither
// is known (a hold that began before the index was built) or the hold ended.
func HeldSince(e *Entry, fromFeed bool) int64 {
	if e.Acquired != 0 || !fromFeed || e.Ended {
		return e.Acquired
	}
	return e.Began
}
