package lifecycle

import (
	"hash/maphash"
	"math/bits"
	"sort"
	"sync"
	"time"
)

// MaxNamespaces is how many namespaces a Tracker follows: the bits of a mask.
const MaxNamespaces = 64

// Reason is why a hold ended.
type Reason uint8

// The reasons of lock_key_ends_total, in its label's order.
const (
	Deleted     Reason = iota // removed before its expiry: a release, or anyone's DEL
	Expired                   // its expiry passed
	Evicted                   // removed by the server's maxmemory policy
	Overwritten               // another holder's value replaced it while live
	Unknown                   // an end the feed saw but cannot attribute
	NumReasons
)

var reasonNames = [NumReasons]string{"deleted", "expired", "evicted", "overwritten", "unknown"}

// String is the reason's label value.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "invalid"
}

// Settings are one namespace's lifecycle settings.
type Settings struct {
	// TakeoverWindow: an acquisition less than this after the key's expired or overwritten end
	// is a takeover.
	TakeoverWindow time.Duration
	// EndsByExpiry: the namespace's holds end by expiry on purpose (a lock held until its TTL,
	// a reconciler whose expiry rotates ownership). Their expiries count as expired ends, but
	// no acquisition after one is a takeover.
	EndsByExpiry bool
}

// Config configures a Tracker.
type Config struct {
	// Namespaces holds each namespace's settings by bit; at most MaxNamespaces.
	Namespaces []Settings
	// Buckets are the hold-duration histogram's upper bounds in seconds, ascending.
	Buckets []float64
	// MaxRecentEnds bounds the ended keys remembered for the takeover window: past it, an end
	// is not remembered (a takeover after it goes uncounted) until older ends leave the window.
	MaxRecentEnds int
}

// Hold is one key's lifecycle state, kept by the caller between inputs.
type Hold struct {
	// Present: the key existed at the last input.
	Present bool
	// Ended: its hold ended when its expiry passed (Sweep) and the key was not seen again
	// since; Redis may not have reclaimed it yet.
	Ended bool
	// Began is when the tracker saw the hold begin (ms); 0 when it began before the tracker
	// followed the key.
	Began int64
	// ExpireAt is the key's known expiry (ms); 0: none, or not known.
	ExpireAt int64
	// Holder is a hash of the holder (HolderHash); 0: not read.
	Holder uint64
}

// Live reports whether the hold has not ended.
func (h Hold) Live() bool { return h.Present && !h.Ended }

// Reading is what a re-read of a key found.
type Reading struct {
	Present  bool
	ExpireAt int64  // ms; 0: no expiry
	Holder   uint64 // 0: not read
	// Slack (ms) is how far a read expiry may be from the truth (0 where the server reports
	// it exactly, PEXPIRETIME): an expiry counts as passed once the time is past it by more
	// than that, and two readings of an expiry so close are the same.
	Slack int64
	// ChangedAfter (ms) is an instant before which the key had not changed since the previous
	// reading: its first change came after it. 0: not known, the change may have come any time
	// since. The reading itself can come long after the change (the feed is read in rounds);
	// only this bound tells a change before the old expiry (a renewal, a handoff) from one
	// after it (a lapse and a takeover).
	ChangedAfter int64
	// ChangedBy (ms) is an instant by which the change the reading follows had happened, read
	// from the server's own clock (the feed's round trip that named it); 0: not known. A hold
	// the reading finds begun, or a holder it finds replaced, is stamped then rather than at the
	// reading's time: the reading's time is an estimate of the server's clock, which a late
	// reply can set early, and a hold stamped before its key was written reads older than it is.
	ChangedBy int64
}

// changedAt is when the reading's change is stamped: ChangedBy where known, else at.
func (r Reading) changedAt(at int64) int64 {
	if r.ChangedBy != 0 {
		return r.ChangedBy
	}
	return at
}

// Counts are one namespace's counters.
type Counts struct {
	Acquisitions, Takeovers, Renewals uint64
	Ends                              [NumReasons]uint64
	// HoldBuckets counts hold durations per bucket of Config.Buckets (not cumulative); the
	// last element counts those above the last bound.
	HoldBuckets []uint64
	HoldCount   uint64
	HoldSum     float64 // seconds
}

// Tracker keeps the lifecycle counters of up to MaxNamespaces namespaces and the recently
// ended keys. It is safe for concurrent use.
type Tracker struct {
	cfg       Config
	maxWindow int64 // ms, the longest takeover window
	seed      maphash.Seed

	mu       sync.Mutex
	counts   []Counts
	recent   map[uint64]recentEnd // by key hash
	followed uint64               // namespaces followed at least once
}

// recentEnd is when a key's last hold ended, for the takeover window.
type recentEnd struct {
	at      int64 // ms
	expired bool  // by expiry (else overwritten)
}

// Source holds the counts one input source (a node's change feed) made since its last
// Commit: they reach the Tracker's counters only when the source knows its readings were of the
// data it follows. A Source is used under the Tracker's lock; its methods are the Tracker's.
type Source struct {
	pending []Counts
}

// NewSource returns a source with nothing pending.
func (t *Tracker) NewSource() *Source {
	return &Source{pending: newCounts(len(t.cfg.Namespaces), len(t.cfg.Buckets))}
}

// Commit adds what src counted since its last Commit or Discard to the counters.
func (t *Tracker) Commit(src *Source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for b := range src.pending {
		t.counts[b].add(&src.pending[b])
		src.pending[b].reset()
	}
}

// Discard drops what src counted since its last Commit, and every remembered end: the data
// they were read from was replaced (a SWAPDB that the source's feed did not report), so no
// later acquisition is a takeover after one of them.
func (t *Tracker) Discard(src *Source) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for b := range src.pending {
		src.pending[b].reset()
	}
	clear(t.recent)
}

func newCounts(namespaces, buckets int) []Counts {
	c := make([]Counts, namespaces)
	for i := range c {
		c[i].HoldBuckets = make([]uint64, buckets+1)
	}
	return c
}

func (c *Counts) add(o *Counts) {
	c.Acquisitions += o.Acquisitions
	c.Takeovers += o.Takeovers
	c.Renewals += o.Renewals
	for r := range c.Ends {
		c.Ends[r] += o.Ends[r]
	}
	for i := range c.HoldBuckets {
		c.HoldBuckets[i] += o.HoldBuckets[i]
	}
	c.HoldCount += o.HoldCount
	c.HoldSum += o.HoldSum
}

func (c *Counts) reset() {
	buckets := c.HoldBuckets
	clear(buckets)
	*c = Counts{HoldBuckets: buckets}
}

// New returns a Tracker with every counter at 0.
func New(cfg Config) *Tracker {
	cfg.Namespaces = cfg.Namespaces[:min(len(cfg.Namespaces), MaxNamespaces)]
	t := &Tracker{cfg: cfg, seed: maphash.MakeSeed(), counts: newCounts(len(cfg.Namespaces), len(cfg.Buckets)), recent: map[uint64]recentEnd{}}
	for _, s := range cfg.Namespaces {
		t.maxWindow = max(t.maxWindow, s.TakeoverWindow.Milliseconds())
	}
	return t
}

// Counts returns a copy of namespace b's counters: what every source committed.
func (t *Tracker) Counts(b int) Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counts[b]
	c.HoldBuckets = append([]uint64(nil), c.HoldBuckets...)
	return c
}

// Buckets returns the hold-duration histogram's upper bounds.
func (t *Tracker) Buckets() []float64 { return t.cfg.Buckets }

// Settings returns namespace b's settings.
func (t *Tracker) Settings(b int) Settings { return t.cfg.Namespaces[b] }

// MarkFollowed records that the namespaces of mask are followed now: their series exist from
// then on, frozen while they are not followed.
func (t *Tracker) MarkFollowed(mask uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.followed |= mask
}

// Followed is the mask of namespaces followed at least once.
func (t *Tracker) Followed() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.followed
}

// HolderHash hashes a holder (a string lock's value, a hash lock's sorted field names) for
// Hold.Holder: holders are capabilities, kept only as this hash. Never 0.
func (t *Tracker) HolderHash(parts ...string) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	for _, p := range parts {
		_, _ = h.WriteString(p)
		_ = h.WriteByte(0)
	}
	return max(h.Sum64(), 1)
}

// Observe counts what changed between prev and a re-read r of key at time at (ms), for the
// namespaces of ns, and returns the key's new Hold:
//
//   - absent to present: an acquisition (a takeover within the window of an expired or
//     overwritten end);
//   - present to absent: an end, expired at the known expiry if that passed by the read (by at,
//     or by r.ChangedBy when later), else deleted;
//   - present to present, the key first changed after the old expiry (r.ChangedAfter): the
//     old hold expired at its expiry and a new one began (a takeover), unless the holders are
//     known and the same (a renewal). A change that may have come before the expiry is read as
//     one that did, whenever the re-read comes: a renewal is never counted as a lapse;
//   - present to present, both holders known and different: an end and an acquisition, no
//     takeover. The end is unknown: one reading cannot tell a value written over a live hold
//     (overwritten) from a release and another holder's acquisition in between (a handoff,
//     within milliseconds wherever waiters are woken by the release, as Redisson's are);
//   - the expiry moved later: a renewal; anything else: nothing.
func (t *Tracker) Observe(src *Source, ns uint64, key string, prev Hold, r Reading, at int64) Hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case !r.Present:
		if prev.Live() {
			t.endRead(src, ns, key, prev, r, at)
		}
		return Hold{}
	case !prev.Present:
		return t.acquire(src, ns, key, r, at)
	case prev.Ended:
		if sameExpiry(prev.ExpireAt, r.ExpireAt, r.Slack) && !holderChanged(prev.Holder, r.Holder) {
			return prev
		}
		return t.acquire(src, ns, key, r, at)
	case passed(prev.ExpireAt, r.ChangedAfter, r.Slack) && !sameExpiry(prev.ExpireAt, r.ExpireAt, r.Slack) && !sameHolder(prev.Holder, r.Holder):
		t.end(src, ns, key, prev, Expired, prev.ExpireAt)
		return t.acquire(src, ns, key, r, at)
	case holderChanged(prev.Holder, r.Holder):
		t.end(src, ns, key, prev, Unknown, r.changedAt(at))
		return t.acquire(src, ns, key, r, at)
	}
	if prev.ExpireAt != 0 && r.ExpireAt > prev.ExpireAt+r.Slack {
		t.each(src, ns, func(c *Counts, _ Settings) { c.Renewals++ })
	}
	prev.ExpireAt = r.ExpireAt
	if r.Holder != 0 {
		prev.Holder = r.Holder
	}
	return prev
}

// Sweep ends key's hold as expired at its known expiry once now (ms) is past it by more than
// slack (see Reading.Slack), the first time only: the key's later disappearance (Redis
// reclaiming it) is not counted again. now must be an instant up to which every change of the
// key is known: a renewal after it, not yet read, would be counted as a lapse.
func (t *Tracker) Sweep(src *Source, ns uint64, key string, h Hold, now, slack int64) Hold {
	if !h.Live() || !passed(h.ExpireAt, now, slack) {
		return h
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end(src, ns, key, h, Expired, h.ExpireAt)
	h.Ended = true
	return h
}

// PruneRecent forgets the ends older than every takeover window as of now (ms).
func (t *Tracker) PruneRecent(now int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.recent {
		if now-e.at >= t.maxWindow {
			delete(t.recent, k)
		}
	}
}

// RecentEnds is how many ended keys the tracker remembers for the takeover window.
func (t *Tracker) RecentEnds() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.recent)
}

// endRead ends a live hold whose key the reading r at at found absent: expired if its expiry
// had passed by the read (it ends at the expiry), else deleted (by r.ChangedBy where known).
// The read came after r.ChangedBy, whatever at, an estimate of the server's clock, says: an
// early estimate must not make a lapse a release. t.mu is held.
func (t *Tracker) endRead(src *Source, ns uint64, key string, h Hold, r Reading, at int64) {
	if passed(h.ExpireAt, max(at, r.ChangedBy), r.Slack) {
		t.end(src, ns, key, h, Expired, h.ExpireAt)
		return
	}
	t.end(src, ns, key, h, Deleted, r.changedAt(at))
}

// acquire counts a hold beginning at at, and a takeover for each namespace whose window holds
// the key's last expired or overwritten end. Not followed (ns 0), the hold's beginning is
// unknown. t.mu is held.
func (t *Tracker) acquire(src *Source, ns uint64, key string, r Reading, at int64) Hold {
	h := Hold{Present: true, ExpireAt: r.ExpireAt, Holder: r.Holder}
	if ns == 0 {
		return h
	}
	at = r.changedAt(at)
	h.Began = at
	kh := t.keyHash(key)
	last, ended := t.recent[kh]
	delete(t.recent, kh)
	t.each(src, ns, func(c *Counts, s Settings) {
		c.Acquisitions++
		if ended && at-last.at < s.TakeoverWindow.Milliseconds() && !(last.expired && s.EndsByExpiry) {
			c.Takeovers++
		}
	})
	return h
}

// end counts h's end for reason at endAt (ms), its duration when its beginning is known, and
// remembers an expired or overwritten end for the takeover window. t.mu is held.
func (t *Tracker) end(src *Source, ns uint64, key string, h Hold, reason Reason, endAt int64) {
	if ns == 0 {
		return
	}
	kh := t.keyHash(key)
	delete(t.recent, kh)
	if (reason == Expired || reason == Overwritten) && len(t.recent) < t.cfg.MaxRecentEnds {
		t.recent[kh] = recentEnd{at: endAt, expired: reason == Expired}
	}
	held := -1.0
	if h.Began != 0 {
		held = float64(max(0, endAt-h.Began)) / 1000
	}
	bucket := sort.SearchFloat64s(t.cfg.Buckets, held) // first bound >= held
	t.each(src, ns, func(c *Counts, _ Settings) {
		c.Ends[reason]++
		if held >= 0 {
			c.HoldBuckets[bucket]++
			c.HoldCount++
			c.HoldSum += held
		}
	})
}

// each calls f with src's pending counters and the settings of every namespace of ns. t.mu
// is held.
func (t *Tracker) each(src *Source, ns uint64, f func(*Counts, Settings)) {
	for m := ns; m != 0; m &= m - 1 {
		if b := bits.TrailingZeros64(m); b < len(src.pending) {
			f(&src.pending[b], t.cfg.Namespaces[b])
		}
	}
}

func (t *Tracker) keyHash(key string) uint64 { return maphash.String(t.seed, key) }

// passed reports whether a known expiry passed by at (ms), beyond the slack. Redis expires a
// key once its clock is past the expiry.
func passed(expireAt, at, slack int64) bool {
	return expireAt != 0 && expireAt+slack < at
}

// sameExpiry reports whether two readings of an expiry are the same within the slack.
func sameExpiry(a, b, slack int64) bool {
	if a == 0 || b == 0 {
		return a == b
	}
	return a-b <= slack && b-a <= slack
}

// holderChanged reports whether both holders are known and differ.
func holderChanged(a, b uint64) bool { return a != 0 && b != 0 && a != b }

// sameHolder reports whether both holders are known and equal.
func sameHolder(a, b uint64) bool { return a != 0 && a == b }
