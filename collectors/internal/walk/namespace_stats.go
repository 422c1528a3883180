package walk

import (
	"fmt"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// nsState is one namespace's running aggregate across every node.
type nsState struct {
	keys, noTTL, fence int64
	examined           int // keys reserved under the cap
	inspected          int // reserved keys whose inspection came back
	minTTL             time.Duration
	hasTTL             bool
	maxIdle            time.Duration
	hasIdle            bool
	top                *TopK // stalest keys
	noTTLTop           *TopK // stalest keys without expiry
	soonest            *TopK // keys with the shortest TTL; nil unless Options.Soonest
	heldTop            *TopK // longest-held keys (namespaces with ExpectedMaxHold)
	maxHeld            time.Duration
	hasHeld            bool
	truncated          bool
	err                error
}

// admit takes keys of one classified SCAN reply, from index from on, into the walk until b holds
// limit keys: fence counters are counted, holder keys skipped, other keys claim a place under each matching
// namespace's cap and are added to b for inspection. It returns where it stopped and whether
// every namespace has reached its cap, so the walk can stop. A walk for the index (sink set)
// adds fence keys to b too, outside the caps, for their expiry: the index must stop counting
// one when it expires, where a walk's SCAN no longer returns it.
func (f *Run) admit(reply *Classified, from int, b *Batch, limit int) (next int, capsReached bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := from
	for ; k < len(reply.Keys) && len(b.Keys) < limit; k++ {
		key := reply.Keys[k]
		matches := reply.NS[reply.Off[k]:reply.Off[k+1]]
		switch reply.Companion[k] {
		case lockkeys.FenceCompanion:
			for _, i := range matches {
				f.ns[i].fence++
			}
			if f.Sink != nil {
				b.NS = append(b.NS, matches...)
				b.Keys = append(b.Keys, key)
				b.Off = append(b.Off, int32(len(b.NS)))
			}
			continue
		case lockkeys.HolderCompanion:
			continue // lives and dies with its lock, which is counted
		}
		start := len(b.NS)
		for _, i := range matches {
			if st := f.ns[i]; st.examined < f.opts.MaxKeys {
				st.examined++
				b.NS = append(b.NS, i)
			} else {
				st.truncated = true
			}
		}
		if len(b.NS) > start {
			b.Keys = append(b.Keys, key)
			b.Off = append(b.Off, int32(len(b.NS)))
		}
	}
	for _, st := range f.ns {
		if !st.truncated {
			return k, false
		}
	}
	return k, true
}

// merge folds one inspected key into namespace i; idleKnown says whether k.Idle was read.
func (st *nsState) merge(k KeyInfo, idleKnown bool) {
	st.keys++
	if k.TTL == NoTTL {
		st.noTTL++
		st.noTTLTop.Offer(k)
	} else {
		if !st.hasTTL || k.TTL < st.minTTL {
			st.minTTL, st.hasTTL = k.TTL, true
		}
		if st.soonest != nil {
			st.soonest.Offer(k)
		}
	}
	if idleKnown && (!st.hasIdle || k.Idle > st.maxIdle) {
		st.maxIdle, st.hasIdle = k.Idle, true
	}
	st.top.Offer(k)
	if k.HasHeld {
		st.mergeHeld(k)
	}
}

// merge folds one inspected batch into the namespaces its keys were admitted to.
func (f *Run) merge(b *Batch, replies []KeyReply, idleKnown bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, r := range replies {
		if r.Fence {
			continue // counted when admitted
		}
		for _, i := range b.NS[b.Off[k]:b.Off[k+1]] {
			st := f.ns[i]
			st.inspected++
			if r.Err == nil && !r.Gone && f.opts.Namespaces[i].Wants(r.Type) {
				st.merge(r.Info, idleKnown)
			}
		}
	}
}

// Snapshot copies the state as of at. A namespace is complete once every node that started has
// finished the walk (or the namespace reached its cap and all its keys came back) without an
// error of its own. Node goroutines all start within microseconds of the slot map being loaded,
// long before any waiter's deadline, so a node that has not registered yet is not a practical
// concern.
func (f *Run) Snapshot(at time.Time) *Result {
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
		if st.err != nil {
			failed++
		}
		res.Namespaces = append(res.Namespaces, f.namespaceResult(i, passDone, dur))
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

// namespaceResult is namespace i's part of a snapshot; f.mu is held.
func (f *Run) namespaceResult(i int, passDone bool, dur time.Duration) NamespaceResult {
	st := f.ns[i]
	capped := st.truncated && st.inspected == st.examined
	return NamespaceResult{
		Namespace:      f.opts.Namespaces[i],
		Keys:           st.keys,
		KeysWithoutTTL: st.noTTL,
		FenceKeys:      st.fence,
		MinTTL:         st.minTTL,
		HasTTL:         st.hasTTL,
		MaxIdle:        st.maxIdle,
		HasIdle:        st.hasIdle,
		Stalest:        f.withHolders(st.top.Sorted()),
		StalestNoTTL:   f.withHolders(st.noTTLTop.Sorted()),
		Soonest:        st.soonest.SortedOrNil(),
		LongestHeld:    st.heldTop.Sorted(),
		MaxHeld:        st.maxHeld,
		HasHeld:        st.hasHeld,
		Truncated:      st.truncated,
		Complete:       st.err == nil && (passDone || capped),
		Err:            st.err,
		Duration:       dur,
	}
}
