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
// new Hold. Hold.ExpireAt is taken as exact (PEXPIRETIME). Pass the events of one command together where they arrive together: an "expire"
// in the same call as, or at the same ms as, the event that began the hold is part of the
// acquisition (SET ... PX publishes "set" then "expire"; Redisson's lock script "hincrby" then
// "expire").
//
//   - "set" (and RENAME, MOVE or COPY into the key) begins a hold; on a live hold it is also an
//     overwritten end. "hset"/"hincrby" begin a hold on an absent key, and change nothing on a
//     live one (a Redisson re-entry or partial unlock: the field's count, not the holder).
//   - "expire" on a live hold is a renewal. Events carry no expiry: ExpireAt becomes 0 (not
//     known) whenever an event changes it, and the caller fills it in from a read (PEXPIRETIME)
//     so that Sweep and "expired" end the hold at its expiry.
//   - "del" ends a live hold, deleted, or expired if its known expiry passed (a replica
//     publishes an expiry as "del"); "expired" and "evicted" end it so. A hold Sweep already
//     ended is not counted again.
//   - "rename_from"/"move_from" end a live hold, unknown: the lock left under another name.
//   - "restore" (a slot migration's arrival, a restored backup) is no acquisition: the hold's
//     beginning is unknown; on a live hold, RESTORE ... REPLACE is an end of unknown cause.
//   - Any other event ("new", "hdel", value changes) changes nothing.
func (t *Tracker) ApplyEvents(src *Source, ns uint64, key string, prev Hold, events []string, at int64) Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := prev
	for _, ev := range events {
		h = t.applyEvent(src, ns, key, h, eventKinds[ev], at)
	}
	return h
}

// applyEvent applies one event. t.mu is held.
func (t *Tracker) applyEvent(src *Source, ns uint64, key string, h Hold, kind eventKind, at int64) Hold {
	switch kind {
	case eventWrite, eventMovedIn:
		if h.Live() {
			t.end(src, ns, key, h, Overwritten, at)
		}
		return t.acquire(src, ns, key, Reading{Present: true}, at)
	case eventHashWrite:
		if h.Live() {
			return h
		}
		return t.acquire(src, ns, key, Reading{Present: true, Holder: h.Holder}, at)
	case eventExpire:
		if h.Live() && !(h.Began == at && ns != 0) {
			t.each(src, ns, func(c *Counts, _ Settings) { c.Renewals++ })
		}
		h.ExpireAt = 0
		return h
	case eventPersist:
		h.ExpireAt = 0
		return h
	case eventDel:
		if h.Live() {
			t.endRead(src, ns, key, h, at, 0)
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
