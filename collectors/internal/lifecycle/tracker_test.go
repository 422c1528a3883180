package lifecycle

import (
	"testing"
	"time"
)

// Namespace bits of the trackers under test.
const (
	lapsing  uint64 = 1 << 0 // a takeover window of 5s
	byExpiry uint64 = 1 << 1 // ends by expiry on purpose
)

// testTracker is a Tracker whose inputs come from one source, committed after each.
type testTracker struct {
	*Tracker
	src *Source
}

func newTestTracker() testTracker {
	tr := New(Config{
		Namespaces: []Settings{
			{TakeoverWindow: 5 * time.Second},
			{TakeoverWindow: 5 * time.Second, EndsByExpiry: true},
		},
		Buckets:       []float64{1, 10},
		MaxRecentEnds: 10,
	})
	return testTracker{tr, tr.NewSource()}
}

func (tt testTracker) Observe(ns uint64, key string, prev Hold, r Reading, at int64) Hold {
	defer tt.Commit(tt.src)
	return tt.Tracker.Observe(tt.src, ns, key, prev, r, at)
}

func (tt testTracker) Sweep(ns uint64, key string, h Hold, now, slack int64) Hold {
	defer tt.Commit(tt.src)
	return tt.Tracker.Sweep(tt.src, ns, key, h, now, slack)
}

func (tt testTracker) ApplyEvents(ns uint64, key string, prev Hold, events []string, at int64) Hold {
	defer tt.Commit(tt.src)
	return tt.Tracker.ApplyEvents(tt.src, ns, key, prev, events, 0, at)
}

// want is a namespace's expected counters; ends by reason.
type want struct {
	acq, takeovers, renewals, holds uint64
	ends                            map[Reason]uint64
}

func checkCounts(t *testing.T, tr testTracker, b int, w want) {
	t.Helper()
	c := tr.Counts(b)
	if c.Acquisitions != w.acq || c.Takeovers != w.takeovers || c.Renewals != w.renewals || c.HoldCount != w.holds {
		t.Errorf("ns %d: acquisitions %d takeovers %d renewals %d holds %d, want %d %d %d %d",
			b, c.Acquisitions, c.Takeovers, c.Renewals, c.HoldCount, w.acq, w.takeovers, w.renewals, w.holds)
	}
	for r := range NumReasons {
		if c.Ends[r] != w.ends[r] {
			t.Errorf("ns %d: ends %s = %d, want %d", b, r, c.Ends[r], w.ends[r])
		}
	}
}

// read is a re-read: present with expiry exp (0: none) and holder.
func read(exp int64, holder uint64) Reading {
	return Reading{Present: true, ExpireAt: exp, Holder: holder}
}

// readAfter is read with the key's first change since the previous reading known to come
// after changedAfter.
func readAfter(exp int64, holder uint64, changedAfter int64) Reading {
	r := read(exp, holder)
	r.ChangedAfter = changedAfter
	return r
}

var gone = Reading{}

// step is one input: a re-read (r), events, or a sweep, at ms.
type step struct {
	at     int64
	r      *Reading
	events []string
	sweep  bool
}

func obs(at int64, r Reading) step        { return step{at: at, r: &r} }
func evs(at int64, events ...string) step { return step{at: at, events: events} }
func sweepAt(at int64) step               { return step{at: at, sweep: true} }
func run(tr testTracker, ns uint64, steps []step) Hold {
	var h Hold
	for _, s := range steps {
		switch {
		case s.r != nil:
			h = tr.Observe(ns, "k", h, *s.r, s.at)
		case s.sweep:
			h = tr.Sweep(ns, "k", h, s.at, 0)
		default:
			h = tr.ApplyEvents(ns, "k", h, s.events, s.at)
		}
	}
	return h
}

func TestObserve(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		want  want
	}{
		{"acquired", []step{obs(1000, read(2000, 0))}, want{acq: 1}},
		{"released before expiry", []step{obs(1000, read(2000, 0)), obs(1500, gone)},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Deleted: 1}}},
		{"gone after expiry", []step{obs(1000, read(2000, 0)), obs(2500, gone)},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"lapsed then taken by another, seen apart", []step{obs(1000, read(2000, 0)), obs(2500, gone), obs(3000, read(4000, 0))},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"lapsed then taken, one read", []step{obs(1000, read(2000, 0)), obs(3000, readAfter(4000, 0, 2001))},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"changed by the expiry, read after it: a renewal", []step{obs(1000, read(2000, 0)), obs(3000, readAfter(4000, 0, 2000))},
			want{acq: 1, renewals: 1}},
		{"changed at an unknown time, read after the expiry: a renewal", []step{obs(1000, read(2000, 0)), obs(3000, read(4000, 0))},
			want{acq: 1, renewals: 1}},
		{"changed within the slack of the expiry: a renewal", []step{obs(1000, read(2000, 0)), obs(3000, Reading{Present: true, ExpireAt: 4000, Slack: 50, ChangedAfter: 2050})},
			want{acq: 1, renewals: 1}},
		{"released then acquired: no takeover", []step{obs(1000, read(2000, 0)), obs(1500, gone), obs(1600, read(2600, 0))},
			want{acq: 2, holds: 1, ends: map[Reason]uint64{Deleted: 1}}},
		{"taken over after the window", []step{obs(1000, read(2000, 0)), obs(2500, gone), obs(7001, read(9000, 0))},
			want{acq: 2, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"renewed", []step{obs(1000, read(2000, 0)), obs(1500, read(2500, 0))}, want{acq: 1, renewals: 1}},
		{"expiry shortened: nothing", []step{obs(1000, read(2000, 0)), obs(1500, read(1800, 0))}, want{acq: 1}},
		{"read again unchanged: nothing", []step{obs(1000, read(2000, 0)), obs(1500, read(2000, 0))}, want{acq: 1}},
		{"renewed past the old expiry by the same holder", []step{obs(1000, read(2000, 7)), obs(2500, read(3500, 7))},
			want{acq: 1, renewals: 1}},
		{"another holder, one reading: overwritten or a handoff, unknown", []step{obs(1000, read(2000, 7)), obs(1500, read(2500, 8))},
			want{acq: 2, holds: 1, ends: map[Reason]uint64{Unknown: 1}}},
		{"another holder after the expiry: lapsed, taken over", []step{obs(1000, read(2000, 7)), obs(2500, readAfter(3500, 8, 2100))},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"another holder, maybe before the expiry: unknown, no takeover", []step{obs(1000, read(2000, 7)), obs(2500, readAfter(3500, 8, 1900))},
			want{acq: 2, holds: 1, ends: map[Reason]uint64{Unknown: 1}}},
		{"holder unknown on one side: renewal", []step{obs(1000, read(2000, 7)), obs(1500, read(2500, 0))},
			want{acq: 1, renewals: 1}},
		{"swept, then reclaimed: counted once", []step{obs(1000, read(2000, 0)), sweepAt(2100), sweepAt(2200), obs(2300, gone)},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"swept, then taken over", []step{obs(1000, read(2000, 0)), sweepAt(2100), obs(2300, read(3300, 0))},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"swept, read before reclaim: nothing", []step{obs(1000, read(2000, 0)), sweepAt(2100), obs(2150, read(2000, 0))},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"sweep before expiry: nothing", []step{obs(1000, read(2000, 0)), sweepAt(2000)}, want{acq: 1}},
		{"no expiry: never swept", []step{obs(1000, read(0, 0)), sweepAt(99999)}, want{acq: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker()
			run(tr, lapsing, tc.steps)
			checkCounts(t, tr, 0, tc.want)
		})
	}
}

// TestNotFollowed: with ns 0 (a build, a resync) nothing is counted, and a hold found then has
// no known beginning; its end, once followed, is counted without a duration.
func TestNotFollowed(t *testing.T) {
	tr := newTestTracker()
	h := tr.Observe(0, "k", Hold{}, read(2000, 0), 1000)
	if h.Began != 0 || !h.Present {
		t.Fatalf("hold found while not followed: %+v, want present, beginning unknown", h)
	}
	checkCounts(t, tr, 0, want{})
	tr.Observe(lapsing, "k", h, gone, 1500)
	checkCounts(t, tr, 0, want{ends: map[Reason]uint64{Deleted: 1}})
}

// TestEndsByExpiry: an ends-by-expiry namespace counts its expiries but no takeover after one;
// an overwrite still precedes a takeover.
func TestEndsByExpiry(t *testing.T) {
	tr := newTestTracker()
	run(tr, lapsing|byExpiry, []step{obs(1000, read(2000, 0)), obs(2500, gone), evs(3000, "set"), evs(3500, "set")})
	// The second SET, its holder not read, is an extension: only the lapsing namespace counts a
	// takeover after the expiry.
	checkCounts(t, tr, 0, want{acq: 2, takeovers: 1, renewals: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}})
	checkCounts(t, tr, 1, want{acq: 2, takeovers: 0, renewals: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}})
}

func TestHoldDuration(t *testing.T) {
	tr := newTestTracker()
	run(tr, lapsing, []step{obs(1000, read(20000, 0)), obs(6000, gone)}) // 5s: bucket le=10
	run(tr, lapsing, []step{obs(1000, read(2000, 0)), sweepAt(9000)})    // 1s at its expiry: le=1
	c := tr.Counts(0)
	if got := c.HoldBuckets; got[0] != 1 || got[1] != 1 || got[2] != 0 || c.HoldSum != 6 {
		t.Errorf("buckets %v sum %v, want [1 1 0] sum 6", got, c.HoldSum)
	}
}

// TestHoldBeginsByItsChange: a reading that knows by when its change had happened stamps the
// hold's beginning (and a replaced holder's end) then, not at the reading's own time.
func TestHoldBeginsByItsChange(t *testing.T) {
	cases := []struct {
		name      string
		steps     []step
		wantBegan int64
	}{
		{"by unknown: the reading's time", []step{obs(1000, read(9000, 0))}, 1000},
		{"by known, before the reading", []step{obs(1000, Reading{Present: true, ExpireAt: 9000, ChangedBy: 950})}, 950},
		{"by known, after a reading whose time is early", []step{obs(1000, Reading{Present: true, ExpireAt: 9000, ChangedBy: 1040})}, 1040},
		{"holder replaced", []step{obs(1000, read(9000, 1)), obs(3000, Reading{Present: true, ExpireAt: 9000, Holder: 2, ChangedBy: 2900})}, 2900},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if h := run(newTestTracker(), lapsing, tc.steps); h.Began != tc.wantBegan {
				t.Errorf("began %d, want %d", h.Began, tc.wantBegan)
			}
		})
	}
	tr := newTestTracker()
	run(tr, lapsing, []step{obs(1000, read(20000, 1)), obs(6000, Reading{Present: true, ExpireAt: 20000, Holder: 2, ChangedBy: 2000})})
	if c := tr.Counts(0); c.HoldSum != 1 {
		t.Errorf("replaced holder's hold %vs, want 1 (ended by 2000, not at the 6000 reading)", c.HoldSum)
	}
}

// TestEndReadByItsChange: a key a reading finds gone had changed by ChangedBy (the server's
// clock), so the reading came after it, whatever the reading's own time, an estimate, says: a
// lapse read with an early estimate is still a lapse, and a release is stamped by ChangedBy.
func TestEndReadByItsChange(t *testing.T) {
	goneBy := func(by int64) Reading { return Reading{ChangedBy: by} }
	cases := []struct {
		name    string
		end     step
		want    Reason
		wantSum float64
	}{
		{"expired, the reading's time early", obs(1990, goneBy(2001)), Expired, 1},
		{"expired, the reading's time late", obs(2500, goneBy(2001)), Expired, 1},
		{"deleted, the reading's time early", obs(1700, goneBy(1800)), Deleted, 0.8},
		{"deleted, the reading's time late", obs(1850, goneBy(1800)), Deleted, 0.8},
		{"deleted, by unknown: the reading's time", obs(1800, gone), Deleted, 0.8},
		{"expiry passed by the reading, by unknown", obs(2500, gone), Expired, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker()
			run(tr, lapsing, []step{obs(1000, read(2000, 0)), tc.end})
			c := tr.Counts(0)
			for r := range NumReasons {
				want := uint64(0)
				if r == tc.want {
					want = 1
				}
				if c.Ends[r] != want {
					t.Errorf("ends %s = %d, want %d", r, c.Ends[r], want)
				}
			}
			if c.HoldSum != tc.wantSum {
				t.Errorf("hold %vs, want %vs", c.HoldSum, tc.wantSum)
			}
		})
	}
}

// TestRecentEndsBounded: past MaxRecentEnds an end is not remembered (the takeover after it is
// not counted), and PruneRecent forgets ends past every window.
func TestRecentEndsBounded(t *testing.T) {
	tr := newTestTracker()
	for i := range 12 {
		key := string(rune('a' + i))
		h := tr.Observe(lapsing, key, Hold{}, read(2000, 0), 1000)
		tr.Sweep(lapsing, key, h, 2100, 0)
	}
	if n := tr.RecentEnds(); n != 10 {
		t.Fatalf("%d recent ends, want the bound 10", n)
	}
	tr.PruneRecent(2000 + 4999)
	if n := tr.RecentEnds(); n != 10 {
		t.Fatalf("%d recent ends within the window, want 10", n)
	}
	tr.PruneRecent(2000 + 5000)
	if n := tr.RecentEnds(); n != 0 {
		t.Fatalf("%d recent ends after the window, want 0", n)
	}
}

func TestHolderHash(t *testing.T) {
	tr := newTestTracker()
	a, b := tr.HolderHash("token-a"), tr.HolderHash("token-b")
	if a == 0 || a == b || a != tr.HolderHash("token-a") {
		t.Errorf("HolderHash: %x %x, want distinct, stable, non-zero", a, b)
	}
	if tr.HolderHash("ab", "c") == tr.HolderHash("a", "bc") {
		t.Error("HolderHash: parts run together")
	}
}

// TestSlack: an expiry read from PTTL (Redis 6) may be early by the read's latency: within
// the slack it has not passed, and two readings that close are the same expiry.
func TestSlack(t *testing.T) {
	tr := newTestTracker()
	r := Reading{Present: true, ExpireAt: 2000, Slack: 50}
	h := tr.Observe(lapsing, "k", Hold{}, r, 1000)
	r.ExpireAt = 2040
	h = tr.Observe(lapsing, "k", h, r, 1500) // the same expiry read again
	if h = tr.Sweep(lapsing, "k", h, 2050, 50); h.Ended {
		t.Fatal("swept within the slack")
	}
	tr.Observe(lapsing, "k", h, Reading{Slack: 50}, 2060) // gone within the slack: deleted
	checkCounts(t, tr, 0, want{acq: 1, holds: 1, ends: map[Reason]uint64{Deleted: 1}})
}

// TestSourceCommitAndDiscard: a source's counts reach the counters only when committed;
// discarded, they never do, and no takeover follows an end remembered before.
func TestSourceCommitAndDiscard(t *testing.T) {
	tr := New(Config{Namespaces: []Settings{{TakeoverWindow: 5 * time.Second}}, Buckets: []float64{1}, MaxRecentEnds: 10})
	src := tr.NewSource()
	h := tr.Observe(src, 1, "k", Hold{}, read(2000, 0), 1000)
	if c := tr.Counts(0); c.Acquisitions != 0 {
		t.Fatalf("%d acquisitions before the commit, want 0", c.Acquisitions)
	}
	tr.Commit(src)
	tr.Observe(src, 1, "k", h, gone, 2500) // expired: remembered for the window
	tr.Discard(src)
	tr.Observe(src, 1, "k", Hold{}, read(4000, 0), 3000)
	tr.Commit(src)
	if c := tr.Counts(0); c.Acquisitions != 2 || c.Ends[Expired] != 0 || c.Takeovers != 0 {
		t.Errorf("acquisitions %d, expired %d, takeovers %d; want 2, 0 (discarded), 0 (its end forgotten)", c.Acquisitions, c.Ends[Expired], c.Takeovers)
	}
}
