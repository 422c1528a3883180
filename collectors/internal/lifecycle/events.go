package lifecycle

// eventKind is what a keyspace event means for a lock key's hold.
type eventKind uint8

const (
	eventIgnored   eventKind = iota // no change to the hold ("new", a value change, hdel ...)
	eventWrite                      // the value was written: creates a hold, replaces a live one
	eventHashWrite                  // a hash field was written: creates a hold, else nothing
	eventExpire                     // the expiry was set: a renewal of a live hold
	eventPersist                    // the expiry was removed
	eventDel                        // deleted (or, on a replica, expired)
	eventExpired                    // expired
	eventEvicted                    // evicted
	eventMovedOut                   // left for another name or database: an end of unknown cause
	eventMovedIn                    // arrived from another name or database: a new hold
	eventRestored                   // arrived by RESTORE (a migration, a backup): no acquisition
)

// eventKinds classifies the keyspace event names Redis publishes for a key.
var eventKinds = map[string]eventKind{
	"set":          eventWrite,
	"hset":         eventHashWrite,
	"hincrby":      eventHashWrite,
	"hincrbyfloat": eventHashWrite,
	"expire":       eventExpire,
	"persist":      eventPersist,
	"del":          eventDel,
	"expired":      eventExpired,
	"evicted":      eventEvicted,
	"rename_from":  eventMovedOut,
	"move_from":    eventMovedOut,
	"rename_to":    eventMovedIn,
	"move_to":      eventMovedIn,
	"copy_to":      eventMovedIn,
	"restore":      eventRestored,
}

// ApplyEvents counts the keyspace events of key (Redis notification event names, in the order
// Redis published them) received at at (ms), for the namespaces of ns, and returns the key's
// new Hold. holder is the hash of the key's holder read after the events (0: not read): it is
// the holder of the last write among them, the others' are unknown.
//
//   - "set" (and RENAME, MOVE or COPY into the key) on an absent key begins a hold. On a live
//     hold it is a renewal (redlock extends with SET of the same value), unless holder was read
//     and differs from the hold's: then it is an overwritten end and a new hold. Without the
//     holder read, another holder's SET over a live hold is not told from an extension: the
//     count errs low, never high.
//   - "hset"/"hincrby" begin a hold on an absent key, and change nothing on a live one (a
//     Redisson re-entry or partial unlock: the field's count, not the holder).
//   - "expire" on a live hold is a renewal, except right after the event of the command that
//     set it: SET ... PX publishes "set" then "expire", Redisson's lock script "hincrby" then
//     "expire". Events of one command split across two calls share their ms (at), and an
//     "expire" first in a call at the ms its hold began is taken as that command's too.
//     Events carry no expiry: ExpireAt becomes 0 (not known) whenever an event changes it, and
//     the caller fills it in from a read (PEXPIRETIME) so that Sweep and "expired" end the hold
//     at its expiry.
//   - "del" ends a live hold, deleted, or expired if its known expiry passed (a replica
//     publishes an expiry as "del"); "expired" and "evicted" end it so. A hold Sweep already
//     ended is not counted again.
//   - "rename_from"/"move_from" end a live hold, unknown: the lock left under another name.
//   - "restore" (a slot migration's arrival, a restored backup) is no acquisition: the hold's
//     beginning is unknown; on a live hold, RESTORE ... REPLACE is an end of unknown cause.
//   - Any other event ("new", "hdel", value changes) changes nothing.
func (t *Tracker) ApplyEvents(src *Source, ns uint64, key string, prev Hold, events []string, holder uint64, at int64) Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := prev
	// setter: the last event set the key's value in a command that may set its expiry too.
	setter := len(events) > 0 && eventKinds[events[0]] == eventExpire && h.Live() && h.Began == at
	last := lastWrite(events)
	for i, ev := range events {
		kind := eventKinds[ev]
		if kind == eventExpire && setter {
			h.ExpireAt, setter = 0, false
			continue
		}
		wasLive := h.Live()
		read := uint64(0) // the holder read after the events is the last write's alone
		if i == last {
			read = holder
		}
		h = t.applyEvent(src, ns, key, h, kind, read, at)
		// A hash field written on a live hold (a Redisson re-entry) leaves the renewal to the
		// "expire" after it; a SET counted its own.
		setter = kind == eventWrite || kind == eventMovedIn || kind == eventHashWrite && !wasLive
	}
	return h
}

// lastWrite is the position of the last event that wrote the key's whole value, or -1.
func lastWrite(events []string) int {
	for i := len(events) - 1; i >= 0; i-- {
		if k := eventKinds[events[i]]; k == eventWrite || k == eventMovedIn {
			return i
		}
	}
	return -1
}

// applyEvent applies one event. t.mu is held.
func (t *Tracker) applyEvent(src *Source, ns uint64, key string, h Hold, kind eventKind, holder uint64, at int64) Hold {
	switch kind {
	case eventWrite, eventMovedIn:
		return t.written(src, ns, key, h, holder, at)
	case eventHashWrite:
		if h.Live() {
			return h
		}
		return t.acquire(src, ns, key, Reading{Present: true, Holder: h.Holder}, at)
	case eventExpire:
		if h.Live() {
			t.each(src, ns, func(c *Counts, _ Settings) { c.Renewals++ })
		}
		h.ExpireAt = 0
		return h
	case eventPersist:
		h.ExpireAt = 0
		return h
	case eventDel:
		if h.Live() {
			t.endRead(src, ns, key, h, Reading{}, at)
		}
		return Hold{}
	case eventExpired:
		return t.endAs(src, ns, key, h, Expired, at)
	case eventEvicted:
		return t.endAs(src, ns, key, h, Evicted, at)
	case eventMovedOut:
		return t.endAs(src, ns, key, h, Unknown, at)
	case eventRestored:
		if h.Live() {
			t.end(src, ns, key, h, Unknown, at)
		}
		return Hold{Present: true}
	}
	return h
}

// written applies a write of the key's whole value: a new hold on an absent key; on a live
// hold, a renewal by the same holder, or another holder's value over it where the holder read
// says so. t.mu is held.
func (t *Tracker) written(src *Source, ns uint64, key string, h Hold, holder uint64, at int64) Hold {
	if !h.Live() {
		return t.acquire(src, ns, key, Reading{Present: true, Holder: holder}, at)
	}
	if holderChanged(h.Holder, holder) {
		// Another holder's value. Past the hold's known expiry it is a takeover of a lapsed
		// hold: a script's SET NX finds the key expired without an "expired" event first.
		if h.ExpireAt != 0 && h.ExpireAt < at {
			t.end(src, ns, key, h, Expired, h.ExpireAt)
		} else {
			t.end(src, ns, key, h, Overwritten, at)
		}
		return t.acquire(src, ns, key, Reading{Present: true, Holder: holder}, at)
	}
	t.each(src, ns, func(c *Counts, _ Settings) { c.Renewals++ })
	h.ExpireAt = 0
	return h
}

// endAs ends a live hold for reason, at its known expiry for an expiry (else at at), and
// returns the absent key's Hold. t.mu is held.
func (t *Tracker) endAs(src *Source, ns uint64, key string, h Hold, reason Reason, at int64) Hold {
	if h.Live() {
		endAt := at
		if reason == Expired && h.ExpireAt != 0 && h.ExpireAt < at {
			endAt = h.ExpireAt
		}
		t.end(src, ns, key, h, reason, endAt)
	}
	return Hold{}
}
