package index

import (
	"testing"
	"time"
)

// TestResyncCanEnd: a scrape awaits a master's resync while its build can be expected to end in
// time (by the last build's duration, with half again as slack), and walks the master at once
// when it cannot, or when no build has started for longer than the feed loop's tick allows.
func TestResyncCanEnd(t *testing.T) {
	now := time.Unix(1000, 0)
	until := now.Add(9 * time.Second)
	for _, c := range []struct {
		name  string
		start time.Time
		took  time.Duration
		idle  time.Duration
		want  bool
	}{
		{"build under way, ends in time", now.Add(-time.Second), 4 * time.Second, 0, true},
		{"build under way, slack included ends at until", now, 6 * time.Second, 0, true},
		{"build under way, cannot end in time", now, 7 * time.Second, 0, false},
		{"build under way, last duration unknown", now, 0, 0, true},
		{"between builds, the next tick starts one", time.Time{}, 4 * time.Second, FeedInterval, true},
		{"between builds for longer: a retry's backoff", time.Time{}, 4 * time.Second, resyncGap, false},
	} {
		if got := resyncCanEnd(now, until, c.start, c.took, c.idle); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if resyncCanEnd(until, until, now, time.Second, 0) {
		t.Error("at until: still waiting")
	}
}
