package observe

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// lockID names one lock attempt sequence or held lock: a namespace, the lock's name and the
// seeded hash of the value its holder writes. A lock is its key: hand-made locks often write a
// constant value ("1") under many keys, and each key is a lock of its own. The value ties a
// caller's commands on that key together: redislock and redsync keep one value across the
// retries of one Obtain/Lock call and across the servers of one lock. A lock of parts keeps one
// value across its keys, which differ only in their part index (rueidislock's PREFIX:i:NAME):
// its name is the key without the index (see partless).
type lockID struct {
	ns    *namespace
	name  string
	token uint64
}

// entry is the state of one lock while it is waited for or held, and only then.
type entry struct {
	waitingSince time.Time // start of the first busy attempt; zero when not waiting
	lastAttempt  time.Time // end of the latest busy attempt
	heldSince    time.Time // start of the acquire that succeeded; zero when not held
	roundEnd     time.Time // reply of the latest successful acquire of the held lock
	parts        []part    // the keys (or servers) of a held lock, each with its expiry
	partBuf      [1]part   // room for the one part of a single-key lock, saving an allocation
	round        round     // the renew or release of the held lock now answering, part by part
	servers      uint64    // the servers (hook numbers mod 64) the hold had parts on
	endedAt      time.Time // when a failed attempt ended the wait; zero otherwise (see released)
	try          *try      // the value's acquire try on a Redlock while it answers (see try); nil otherwise
	wait         waiter    // the value's retries while it waits (see waiter)
}

// part is one key of a held lock on one server (the hook it was written through).
type part struct {
	key      string
	server   uint32
	replied  bool // answered in the current round
	deadline time.Time
}

func (e *entry) waiting() bool { return !e.waitingSince.IsZero() }
func (e *entry) held() bool    { return !e.heldSince.IsZero() }

// tracker keeps the bounded per-lock state and turns calls into observations.
type tracker struct {
	mu         sync.Mutex
	pending    []pendingReply // replies not applied yet (see pendingReply); guarded by mu
	entries    map[lockID]*entry
	giveUp     time.Duration
	maxTracked int
	dropped    lockmetrics.Counter
	nextSweep  time.Time
	// hooks is how many hooks the Observer handed out: with one, every value is on one server.
	hooks *atomic.Uint32
	// groups are the learned Redlock groups: for each server bit, the servers a value reached
	// together with it in one complete acquire try (see try).
	groups [64]uint64
	// recent remembers the servers of the locks released within releaseLinger (see released).
	recent releasedLocks
}

// releaseLinger is how long a released lock (in tracker.recent), or the entry of a value whose
// attempt failed, is remembered to recognise the late replies of the servers that never held
// it (see released).
const releaseLinger = time.Second

// sweepEvery bounds how often the hook path scans the state for expired entries.
const sweepEvery = 250 * time.Millisecond

func newTracker(giveUp time.Duration, maxTracked int, dropped lockmetrics.Counter) *tracker {
	return &tracker{entries: map[lockID]*entry{}, giveUp: giveUp, maxTracked: maxTracked, dropped: dropped}
}

func (t *tracker) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyPending()
	return len(t.entries)
}

// entryFor returns the lock's entry, creating it unless the cap is reached (nil then). absent
// says that the caller found no entry for id under the lock it still holds (lockEntry), so
// that the map is not hashed and probed again only to miss: an acquire would otherwise look
// its new lock up twice before inserting it.
func (t *tracker) entryFor(id lockID, now time.Time, absent bool) *entry {
	if !absent {
		if e := t.entries[id]; e != nil {
			return e
		}
	}
	if len(t.entries) >= t.maxTracked {
		// Throttled like every sweep: at the cap, a full scan per new lock would cost
		// MaxTracked steps per command.
		t.maybeSweep(now)
		if len(t.entries) >= t.maxTracked {
			t.dropped.Inc()
			return nil
		}
	}
	e := entryPool.Get().(*entry)
	if cap(e.parts) == 0 {
		e.parts = e.partBuf[:0]
	}
	t.entries[id] = e
	return e
}

// lockEntry sweeps if a sweep is due (under the tracker's lock, which applyPending holds), and
// returns the ID of c's lock and its entry, nil when the lock is not tracked. absent reports
// that the map holds no entry for the ID (see entryFor): an entry returned as nil because it
// expired may stay in the map when it still has a try or a failed attempt to remember.
func (t *tracker) lockEntry(c *Call, end time.Time) (id lockID, e *entry, absent bool) {
	t.maybeSweep(end)
	id = lockID{c.ns, c.name, c.token}
	e = t.entries[id]
	if e == nil {
		return id, nil, true
	}
	if e.held() {
		// The entry's own expiries first, whatever the sweep's schedule: a lock whose key
		// expired is not held when its name is acquired again.
		t.expireParts(id, e, end)
		if !e.held() && !e.waiting() {
			return id, nil, t.dropIfIdle(id, e)
		}
	}
	return id, e, false
}

// partless is the name of a lock of parts: key without its first all-digit segment
// ("lw:1:jobs:7" -> "lw:jobs:7"), so every part of one lock has the same name.
func partless(key string) string {
	head, tail, ok := cutPartIndex(key)
	if !ok {
		return key
	}
	return head + tail
}

// cutPartIndex splits key around its part index, the first all-digit segment after the first
// ("lw:1:jobs:7" -> "lw:", "jobs:7"), and reports whether it has one.
func cutPartIndex(key string) (head, tail string, ok bool) {
	start := 0
	for start < len(key) {
		end := strings.IndexByte(key[start:], ':')
		if end < 0 {
			return "", "", false
		}
		seg := key[start : start+end]
		if seg != "" && allDigits(seg) && start > 0 {
			return key[:start], key[start+end+1:], true
		}
		start += end + 1
	}
	return "", "", false
}

// allDigits reports whether s is all ASCII digits (a loop: strings.Trim with a cutset builds
// its set on every call, on every command of a lock of parts).
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// acquired records an acquire attempt: the wait it ends or extends, and the lock it takes. On
// a server that is part of a Redlock the attempt is one server's reply to a try, decided by the
// group's quorum (see try); on a single server it is the try.
func (t *tracker) acquired(c *Call, res result, end time.Time) {
	id, e, absent := t.lockEntry(c, end)
	n := t.groupSize(c.server)
	if e != nil && e.try != nil && e.try.answered&serverBit(c.server) != 0 {
		// A server answers a second time: a new try, so the previous one is complete, and
		// may have taught the server's group.
		t.completeTry(id, e)
		n = t.groupSize(c.server)
	}
	if n != 1 || e != nil && e.try != nil {
		if e == nil {
			e = t.entryFor(id, end, absent)
		}
		if e != nil {
			t.tryReply(c, id, e, res, end, n)
			return
		}
		// At the MaxTracked cap: no state for the try, so each reply is its own.
	}
	t.acquiredOne(c, id, e, absent, res, end)
}

// acquiredOne records an acquire attempt on one server; absent is lockEntry's.
func (t *tracker) acquiredOne(c *Call, id lockID, e *entry, absent bool, res result, end time.Time) {
	m := c.ns.m
	switch res {
	case resultRejected:
		if e != nil && e.held() && !c.start.After(e.roundEnd) {
			// Another server or part of a lock this value took in the same round (a quorum's
			// minority): the attempt started before that round's last success was answered.
			return
		}
		// Otherwise a busy attempt, even on a name this value holds: another process writing
		// the same constant value waits for it.
		if e != nil && e.held() && e.find(c.keys()[0], c.server) >= 0 {
			// Refused a key the value holds there itself: several callers share the value,
			// so its retries are not one caller's.
			c.ns.sharedValues = true
		}
		if e == nil {
			if e = t.entryFor(id, end, absent); e == nil {
				m.WaitBusy.Observe(end.Sub(c.start).Seconds())
				return
			}
		}
		t.attemptFailed(c.ns, e, c.start, end)
	case resultError:
		if e != nil && (e.held() && c.start.Before(e.roundEnd) || e.waiting() && c.start.Before(e.lastAttempt)) {
			// One server of a try that another server already answered (a Redlock with a
			// server down): the try is what the others said, not this error.
			return
		}
		since := c.start
		if e != nil && e.waiting() {
			since = e.waitingSince
			t.endWait(c.ns, e)
		}
		m.WaitError.Observe(end.Sub(since).Seconds())
		if e == nil {
			e = t.entryFor(id, end, absent)
		}
		if e != nil && !e.held() {
			// Remembered for a while (see released): a try of a Redlock can fail on the
			// server that is down before its other servers answer, and redsync's clean-up
			// release on every server follows.
			e.endedAt, e.servers = end, 0
		}
	case resultSuccess:
		t.success(c, id, e, absent, end)
	}
}

// success ends the caller's wait (or its single attempt) and adds the keys to the held lock.
// A lock of several keys on one server (rueidislock's KeyMajority) is held from its first
// acquired key and observed once; a Redlock's servers are decided by quorum instead (see try).
func (t *tracker) success(c *Call, id lockID, e *entry, absent bool, end time.Time) {
	m := c.ns.m
	if e != nil && e.held() {
		t.addParts(e, c, end)
		if end.After(e.roundEnd) {
			e.roundEnd = end
		}
		return
	}
	since := c.start
	if e != nil && e.waiting() {
		since = e.waitingSince
		t.endWait(c.ns, e)
	}
	m.WaitAcquired.Observe(end.Sub(since).Seconds())
	if e == nil {
		if e = t.entryFor(id, end, absent); e == nil {
			return
		}
	}
	e.heldSince, e.roundEnd = c.start, end
	e.endedAt, e.servers = time.Time{}, 0
	t.recent.forget(id)
	m.Held.Inc()
	t.addParts(e, c, end)
}

func (t *tracker) addParts(e *entry, c *Call, end time.Time) {
	deadline := c.deadline(end)
	e.servers |= serverBit(c.server)
	for _, k := range c.keys() {
		e.parts = append(e.parts, part{key: k, server: c.server, deadline: deadline})
	}
}

// refreshed counts a renew attempt and moves the refreshed key's expiry, or drops it from
// the held lock when the server says it is no longer ours. A renew of a held lock is counted
// once per round, by the answer of the majority of its parts (see round).
func (t *tracker) refreshed(c *Call, res result, end time.Time) {
	m := c.ns.m
	id, e, _ := t.lockEntry(c, end)
	if e != nil && e.try != nil {
		// The value's next command: every server of its try has answered.
		t.completeTry(id, e)
	}
	if e == nil || !e.held() {
		countRound(m, opRefresh, res)
		return
	}
	if !t.answer(e, c, opRefresh, res) {
		return
	}
	switch res {
	case resultSuccess:
		deadline := c.deadline(end)
		for _, k := range c.keys() {
			if i := e.find(k, c.server); i >= 0 {
				e.parts[i].deadline = deadline
			}
		}
	case resultRejected:
		t.removeParts(id, e, c, end)
	}
}

// released counts a release and ends the hold when its last key is gone. A release that
// failed in transit leaves the key to its TTL. A release by a value that is waiting and holds
// nothing is not a release but a failed acquire's cleanup (redsync deletes on every pool after
// a try that missed its quorum, busy ones included): it is not counted, or every contended try
// would count as a stale release. A release of a held lock is counted once, by the answer of
// the majority of its parts (see round).
func (t *tracker) released(c *Call, res result, end time.Time) {
	m := c.ns.m
	id, e, _ := t.lockEntry(c, end)
	if e != nil && e.try != nil {
		t.completeTry(id, e)
	}
	if e != nil && e.waiting() && !e.held() {
		return
	}
	if e != nil && !e.held() && !e.endedAt.IsZero() && e.servers&serverBit(c.server) == 0 {
		// A try that failed on an error is cleaned up (redsync releases on every server):
		// not a release of its own.
		return
	}
	if (e == nil || !e.held()) && t.recent.lateMinority(id, c.server, end) {
		// A server that never had a part of a lock just released (the minority its
		// acquire missed) answers after the majority did: not a release either.
		return
	}
	if e == nil || !e.held() {
		countRound(m, opRelease, res)
		return
	}
	if t.answer(e, c, opRelease, res) && res != resultError {
		if t.removeParts(id, e, c, end) {
			if t.hooks != nil && t.hooks.Load() > 1 {
				// Only several servers can send a late minority reply.
				t.recent.record(id, e.servers, end)
			}
			e.servers = 0
			t.dropIfIdle(id, e)
		}
	}
}

// serverBit is a server's bit in entry.servers; servers 64 apart share one, which at worst
// counts a late minority reply as a release.
func serverBit(server uint32) uint64 { return 1 << (server % 64) }

// deleted ends, in ns, the holds of key that a plain DEL or UNLINK removed, whatever value held
// them, without counting a release: one part per lock (the server's), as a release removes.
// It scans the tracked locks (bounded by MaxTracked), as a DEL names no value to look one up.
func (t *tracker) deleted(ns *namespace, key string, server uint32, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyPending()
	var name string // key without its part index, computed once, for locks of parts
	for id, e := range t.entries {
		if id.ns != ns || !e.held() {
			continue
		}
		if id.name != key {
			if name == "" {
				name = partless(key)
			}
			if id.name != name {
				continue
			}
		}
		if i := e.find(key, server); i >= 0 {
			e.parts = append(e.parts[:i], e.parts[i+1:]...)
			if len(e.parts) == 0 {
				t.endHold(id, e, end)
				t.dropIfIdle(id, e)
			}
		}
	}
}

// flushed ends every hold with parts on server, whose keys a FLUSHDB or FLUSHALL removed, as
// deleted does for the keys of a DEL. Parts are told apart by server (hook), not by database:
// clients of different databases of one server must not share a hook.
func (t *tracker) flushed(server uint32, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyPending()
	for id, e := range t.entries {
		if !e.held() {
			continue
		}
		kept := e.parts[:0]
		for _, p := range e.parts {
			if p.server != server {
				kept = append(kept, p)
			}
		}
		clear(e.parts[len(kept):])
		e.parts = kept
		if len(e.parts) == 0 {
			t.endHold(id, e, end)
			t.dropIfIdle(id, e)
		}
	}
}

// find is the index of key's part on server, or -1.
func (e *entry) find(key string, server uint32) int {
	for i, p := range e.parts {
		if p.key == key && p.server == server {
			return i
		}
	}
	return -1
}

// removeParts drops c's parts from the held lock, and reports whether that ended the hold. The
// entry is kept while a wait continues (dropIfIdle); a release drops it itself, after noting
// the servers the lock had (see released).
func (t *tracker) removeParts(id lockID, e *entry, c *Call, end time.Time) bool {
	for _, k := range c.keys() {
		if i := e.find(k, c.server); i >= 0 {
			e.parts = append(e.parts[:i], e.parts[i+1:]...)
		}
	}
	if len(e.parts) > 0 {
		return false
	}
	t.endHold(id, e, end)
	if c.op != opRelease {
		t.dropIfIdle(id, e)
	}
	return true
}

// endHold observes a hold that ended at end, after the round it was in is counted. The caller
// drops the entry (dropIfIdle) unless a wait continues.
func (t *tracker) endHold(id lockID, e *entry, end time.Time) {
	m := id.ns.m
	e.closeRound(m)
	m.HeldSeconds.Observe(end.Sub(e.heldSince).Seconds())
	m.Held.Dec()
	e.heldSince, e.roundEnd = time.Time{}, time.Time{}
	e.parts = e.parts[:0]
}

// dropIfIdle deletes and recycles an entry that is neither held nor waited for, and reports
// whether it did; e must not be used after it was dropped, so every caller calls it last.
func (t *tracker) dropIfIdle(id lockID, e *entry) bool {
	if !e.waiting() && !e.held() && e.endedAt.IsZero() && !e.try.pending() {
		// A decided try may still be attached: it goes with the entry. The parts' array
		// stays (emptied) when small: a lock of parts (rueidislock's three keys) would
		// otherwise grow a new one every cycle.
		delete(t.entries, id)
		parts := e.parts[:cap(e.parts)]
		clear(parts)
		*e = entry{}
		if cap(parts) <= maxPooledParts {
			e.parts = parts[:0]
		}
		entryPool.Put(e)
		return true
	}
	return false
}

// entryPool recycles entries: most locks live for one cycle, and an allocation per cycle is
// a visible share of the hook's cost.
var entryPool = sync.Pool{New: func() any { return new(entry) }}

// maxPooledParts bounds the parts' array a recycled entry keeps: a lock of many keys does not
// pin a large one in the pool.
const maxPooledParts = 8

func (t *tracker) maybeSweep(now time.Time) {
	if now.Before(t.nextSweep) {
		return
	}
	t.sweepLocked(now)
}

// sweep expires state by time: a wait with no attempt for GiveUpAfter is observed as busy,
// and a key past its deadline leaves its lock (the server has expired it), ending the hold
// at the deadline when it was the last.
func (t *tracker) sweep(now time.Time, force bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.applyPending()
	if force {
		t.sweepLocked(now)
		return
	}
	t.maybeSweep(now)
}

func (t *tracker) sweepLocked(now time.Time) {
	t.nextSweep = now.Add(min(sweepEvery, t.giveUp/2))
	for id, e := range t.entries {
		if e.try != nil && now.Sub(e.try.last) > t.giveUp {
			// No command of the value followed its try: it is complete.
			t.completeTry(id, e)
		}
		if e.waiting() && now.Sub(e.lastAttempt) > t.giveUp {
			id.ns.m.WaitBusy.Observe(e.lastAttempt.Sub(e.waitingSince).Seconds())
			t.endWait(id.ns, e)
		} else if e.waiting() {
			t.waiterLapsed(id.ns, e, now)
		}
		if e.held() {
			t.expireParts(id, e, now)
		}
		if !e.endedAt.IsZero() && now.Sub(e.endedAt) > releaseLinger {
			e.endedAt = time.Time{}
		}
		t.dropIfIdle(id, e)
	}
}

func (t *tracker) expireParts(id lockID, e *entry, now time.Time) {
	live := e.parts[:0]
	last := e.heldSince
	for _, p := range e.parts {
		if p.deadline.After(now) {
			live = append(live, p)
		} else if p.deadline.After(last) {
			last = p.deadline
		}
	}
	e.parts = live
	if len(live) == 0 {
		t.endHold(id, e, last)
	}
}
