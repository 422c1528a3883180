package index

import (
	"math/bits"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// Lock lifecycles from the index's change feed (collectors/internal/lifecycle): every re-read
// the feed asks for is an observation of the key, and each scrape sweeps the keys whose known
// expiry passed. Only the feed counts: a build, a resync or a backstop walk learns the keys'
// state without counting anything, so a key they find is no acquisition. Each entry keeps its
// hold's state (indexEntry.began, holder, ended); the Scanner's tracker keeps the counters, one
// set per indexed namespace shared by a cluster's masters, which outlive the indexes.

// LifecycleAside is how many entries of lifecycle state may be kept beside the index (recent
// ends, holds of keys read gone): an eighth of the key budget each, as each costs about what an
// index entry does.
func LifecycleAside(keyBudget int) int { return keyBudget / 8 }

// lifecycleMask is the namespaces whose lifecycles the node follows now: the indexed ones not
// walked for the key budget (nor coming back from it), while the index follows its feed; none
// during a build or a resync, or while a slot move is under way (slotMoving), so that they
// count nothing.
func (n *Node) lifecycleMask() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.current || n.refused != nil || n.failing || n.slotMoving(time.Now()) {
		return 0
	}
	all := uint64(1)<<len(n.namespaces) - 1
	return all &^ n.Budget.OverMask() &^ n.returning
}

// typeMask is the namespaces of mask that count keys of type code typ.
func (n *Node) typeMask(mask uint64, typ uint8) uint64 {
	out := mask
	for m := mask; m != 0; m &= m - 1 {
		if b := bits.TrailingZeros64(m); !n.namespaces[b].Wants(TypeName(typ)) {
			out &^= 1 << b
		}
	}
	return out
}

// observe counts what a feed re-read of key changed (st: the read's stamp), old (had) being
// its entry before, and keeps the hold's new state in its entry. On a notifications feed the
// key's events of the drain are counted instead: they tell a handoff within one drain apart
// from a renewal, which two readings cannot. follow is lifecycleMask.
// syncMu is held.
func (n *Node) observe(idx *KeyIndex, key string, old Entry, had bool, holder uint64, st ReadStamp, follow uint64) {
	cur, has := idx.Get(key)
	if had && old.Fence || has && cur.Fence {
		return
	}
	r := lifecycle.Reading{Slack: slackOf(st.Absolute), ChangedAfter: n.drainChanged[key], ChangedBy: n.drainChangedBy}
	typ := old.Type
	if has {
		r.Present, r.ExpireAt, r.Holder = true, cur.ExpireAt, holder
		typ = cur.Type
	}
	var h lifecycle.Hold
	if events := n.drainEvents[key]; len(events) > 0 {
		h = n.applyEvents(key, old, had, has, typ, events, r.Holder, st.At, follow)
	} else {
		mask := n.typeMask((old.Mask|cur.Mask)&follow, typ)
		h = n.Life.Observe(n.lifeSrc, mask, key, HoldOf(old, had), r, st.At)
	}
	if has {
		if !h.Present {
			// The events ended the hold, and the key read is a value whose events come with the
			// next drain: the entry is no hold until they do.
			h.Ended = true
		}
		cur.WithHold(h)
		idx.Set(key, cur)
	}
}

// applyEvents counts a notifications drain's events of key, old (had) being its entry before
// and has whether the re-read found it. Keyspace notifications name every change in order, so
// they are counted, not the readings. The re-read may find the key gone whose events of the
// drain left a hold live (released after the drain's round trip: the release's events come with
// the next drain), so such a hold is kept aside until then (absentHolds). A key absent at both
// readings is in no entry: its namespaces are its name's, its type the events'. syncMu is held.
func (n *Node) applyEvents(key string, old Entry, had, has bool, typ uint8, events []string, holder uint64, at int64, follow uint64) lifecycle.Hold {
	prev := HoldOf(old, had)
	if p, ok := n.absentHolds[key]; ok {
		delete(n.absentHolds, key)
		if !had {
			prev = p
		}
	}
	if !had && !has {
		typ = eventsType(events)
	}
	h := n.Life.ApplyEvents(n.lifeSrc, n.typeMask(n.maskOf(key)&follow, typ), key, prev, events, holder, at)
	if !has && h.Live() && len(n.absentHolds) < LifecycleAside(n.Opts.KeyBudget) {
		if n.absentHolds == nil {
			n.absentHolds = map[string]lifecycle.Hold{}
		}
		n.absentHolds[key] = h
	}
	return h
}

// eventsType is the type code of a key the events wrote: a hash where a hash command wrote it,
// else a string.
func eventsType(events []string) uint8 {
	for _, ev := range events {
		if strings.HasPrefix(ev, "h") {
			return TypeCodeHash
		}
	}
	return TypeCodeString
}

// sweepLifecycle ends, as expired at their expiry, the holds whose known expiry passed by the
// instant up to which the feed has named every change (ChangeFeed.Complete), never later than
// now (server ms): a renewal after that instant may not be named yet, and ending its hold would
// count a lapse that did not happen. An end happens when the expiry passes, not when Redis
// reclaims the key (and the invalidation of that is not counted again). syncMu is held.
func (n *Node) sweepLifecycle(now int64) {
	follow := n.lifecycleMask()
	if follow == 0 || n.idx == nil || n.feed == nil {
		return
	}
	now = min(now, n.feed.Complete())
	n.mu.Lock()
	slack := slackOf(n.absolute)
	n.mu.Unlock()
	life := n.Life
	for key, e := range n.idx.All() {
		if e.Fence || e.Ended || e.ExpireAt == 0 || e.ExpireAt+slack >= now {
			continue
		}
		e.WithHold(life.Sweep(n.lifeSrc, n.typeMask(e.Mask&follow, e.Type), key, HoldOf(*e, true), now, slack))
	}
	life.Commit(n.lifeSrc) // this scrape checked the server's identity before the sweep
	life.PruneRecent(now)
}

// settleLifecycle settles the lifecycle counts the node's re-reads made since it last did, once
// a check of the server's identity found why ("" when nothing changed): they are committed,
// unless the data may have been replaced (dataReplaced): a SWAPDB, which no change feed
// reports, shows only in this check, and re-reads since it may have read the other database's
// keys; those counts are discarded. A resync settles by its reason too.
func (n *Node) settleLifecycle(why string) {
	if dataReplaced(why) {
		n.Life.Discard(n.lifeSrc)
		return
	}
	n.Life.Commit(n.lifeSrc)
}

// slackOf is how far the index's reading of an expiry may be from the truth: exact with
// PEXPIRETIME (absolute), else read time + PTTL, early by up to the pipeline's latency.
func slackOf(absolute bool) int64 {
	if absolute {
		return 0
	}
	return ExpirySlack
}

// HolderReadOffMessage is logged, at INFO, when a node stops reading lock holders.
const HolderReadOffMessage = "lock key index: lock holders cannot be read (an optional grant); lifecycle counts go on without them"

// holderValueReader is the inspector's holderValue for the node's re-reads: a key's holder is
// read as a string where one of its namespaces counts strings, as a hash where one counts
// hashes; nil once the node was refused the read.
func (n *Node) holderValueReader() func(key string) (str, hash bool) {
	if n.noHolder.Load() {
		return nil
	}
	return func(key string) (str, hash bool) {
		for m := n.maskOf(key); m != 0; m &= m - 1 {
			ns := n.namespaces[bits.TrailingZeros64(m)]
			str = str || ns.Wants(walk.TypeString)
			hash = hash || ns.Wants(walk.TypeHash)
		}
		return str, hash
	}
}

// noteHolderRefusals turns the holder read off for the node at the first refusal among
// replies, with one INFO line: the grant is optional, nothing fails without it. The refusal
// names a command, never a value.
func (n *Node) noteHolderRefusals(replies []walk.KeyReply) {
	for i := range replies {
		err := replies[i].HolderErr
		if err == nil || !walk.IsNoPerm(err) && !commandRefused(err) {
			continue
		}
		if n.noHolder.CompareAndSwap(false, true) {
			n.Opts.Logger.Info(HolderReadOffMessage, "addr", n.client.Options().Addr, "err", err)
		}
		return
	}
}
