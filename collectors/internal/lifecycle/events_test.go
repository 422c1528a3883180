package lifecycle

import "testing"

func TestApplyEvents(t *testing.T) {
	deleted := map[Reason]uint64{Deleted: 1}
	cases := []struct {
		name  string
		steps []step
		want  want
	}{
		{"SET NX PX: one acquisition, not a renewal", []step{evs(1000, "set", "expire")}, want{acq: 1}},
		{"SET then EXPIRE delivered apart, same ms", []step{evs(1000, "set"), evs(1000, "expire")}, want{acq: 1}},
		{"new then set", []step{evs(1000, "new", "set", "expire")}, want{acq: 1}},
		{"released", []step{evs(1000, "set", "expire"), evs(1500, "del")}, want{acq: 1, holds: 1, ends: deleted}},
		{"renewed", []step{evs(1000, "set", "expire"), evs(1400, "expire")}, want{acq: 1, renewals: 1}},
		{"set on a live key: overwritten", []step{evs(1000, "set", "expire"), evs(1500, "set", "expire")},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Overwritten: 1}}},
		{"expired then taken over", []step{evs(1000, "set", "expire"), evs(2000, "expired"), evs(2100, "set", "expire")},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}}},
		{"evicted", []step{evs(1000, "set"), evs(1500, "evicted")}, want{acq: 1, holds: 1, ends: map[Reason]uint64{Evicted: 1}}},
		{"Redisson lock, re-entry, partial and full unlock", []step{
			evs(1000, "hincrby", "expire"), evs(1100, "hincrby", "expire"), evs(1200, "hincrby"), evs(1300, "hdel", "del")},
			want{acq: 1, renewals: 1, holds: 1, ends: deleted}},
		{"hset creates", []step{evs(1000, "hset")}, want{acq: 1}},
		{"persist: nothing", []step{evs(1000, "set", "expire"), evs(1100, "persist")}, want{acq: 1}},
		{"rename out: unknown end", []step{evs(1000, "set"), evs(1100, "rename_from")},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Unknown: 1}}},
		{"rename in: acquisition", []step{evs(1000, "rename_to")}, want{acq: 1}},
		{"rename onto a live key: overwritten", []step{evs(1000, "set"), evs(1100, "rename_to")},
			want{acq: 2, takeovers: 1, holds: 1, ends: map[Reason]uint64{Overwritten: 1}}},
		{"move out, move in", []step{evs(1000, "set"), evs(1100, "move_from"), evs(1200, "move_to")},
			want{acq: 2, holds: 1, ends: map[Reason]uint64{Unknown: 1}}},
		{"copy onto the key", []step{evs(1000, "copy_to")}, want{acq: 1}},
		{"restore: no acquisition; its del ends it", []step{evs(1000, "restore"), evs(1100, "del")}, want{ends: deleted}},
		{"restore replacing a live key: unknown end", []step{evs(1000, "set"), evs(1100, "restore")},
			want{acq: 1, holds: 1, ends: map[Reason]uint64{Unknown: 1}}},
		{"del of an absent key: nothing", []step{evs(1000, "del")}, want{}},
		{"value changes: nothing", []step{evs(1000, "set"), evs(1100, "append", "setrange", "incrby")}, want{acq: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker()
			run(tr, lapsing, tc.steps)
			checkCounts(t, tr, 0, tc.want)
		})
	}
}

// TestEventsAfterSweep: the sweep ends a hold at its known expiry; the "expired" or "del" Redis
// publishes when it reclaims the key is not counted again.
func TestEventsAfterSweep(t *testing.T) {
	for _, ev := range []string{"expired", "del"} {
		tr := newTestTracker()
		h := tr.ApplyEvents(lapsing, "k", Hold{}, []string{"set", "expire"}, 1000)
		h.ExpireAt = 2000 // the caller's read of the expiry
		h = tr.Sweep(lapsing, "k", h, 2100, 0)
		tr.ApplyEvents(lapsing, "k", h, []string{ev}, 2500)
		checkCounts(t, tr, 0, want{acq: 1, holds: 1, ends: map[Reason]uint64{Expired: 1}})
	}
}

// TestDelAfterKnownExpiry: a replica publishes an expiry as "del": past the known expiry it is
// an expired end, at the expiry.
func TestDelAfterKnownExpiry(t *testing.T) {
	tr := newTestTracker()
	h := tr.ApplyEvents(lapsing, "k", Hold{}, []string{"set"}, 1000)
	h.ExpireAt = 2000
	tr.ApplyEvents(lapsing, "k", h, []string{"del"}, 2600)
	c := tr.Counts(0)
	if c.Ends[Expired] != 1 || c.HoldSum != 1 {
		t.Errorf("ends %v hold sum %v, want expired 1 after 1s", c.Ends, c.HoldSum)
	}
}
