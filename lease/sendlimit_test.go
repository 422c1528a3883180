package lease

import (
	"testing"
	"time"
)

// runLimit drives l through windows whose pace depends only on the cap they ran at, as pace
// says, and returns the home cap after them. Each window answers windowCmds commands in sends
// of 16.
func runLimit(l *sendLimit, windows int, pace func(limit int) time.Duration) int {
	now := time.Unix(0, 0)
	l.answered(0)
	l.endWindow(now)
	for range windows {
		now = now.Add(pace(l.cur))
		for !l.answered(16) {
		}
		l.endWindow(now)
	}
	return l.home
}

// The cap follows the pace: it climbs to the highest cap when more sends on the wire answer
// faster (spare CPU), falls to the lowest (two) when fewer do (scarce CPU), and settles where
// the pace peaks.
func TestSendLimitFollowsThePace(t *testing.T) {
	for _, tc := range []struct {
		name string
		pace func(limit int) time.Duration
		want int
	}{
		{"more on the wire is faster", func(limit int) time.Duration { return time.Duration(64/limit) * time.Millisecond }, 16},
		{"fewer on the wire is faster", func(limit int) time.Duration { return time.Duration(limit) * time.Millisecond }, minSendLimit},
		{"fastest at 4", func(limit int) time.Duration {
			return map[int]time.Duration{2: 20, 4: 10, 8: 20, 16: 40}[limit] * time.Millisecond
		}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newSendLimit(2, 16)
			if got := runLimit(&l, 100, tc.pace); got != tc.want {
				t.Errorf("home cap %d after 100 windows, want %d", got, tc.want)
			}
		})
	}
}

// A probe that is not faster goes back home; windows slower than idleWindow measured the
// callers' demand, not the cap, and move nothing.
func TestSendLimitProbesAndIdleWindows(t *testing.T) {
	l := newSendLimit(4, 16)
	flat := func(int) time.Duration { return 10 * time.Millisecond }
	seen := map[int]bool{}
	now := time.Unix(0, 0)
	l.answered(0)
	l.endWindow(now)
	for range 3 * probeEvery {
		seen[l.cur] = true
		now = now.Add(flat(l.cur))
		for !l.answered(windowCmds) {
		}
		l.endWindow(now)
		if l.home != 4 {
			t.Fatalf("home moved to %d on an equal pace, want it to stay at 4", l.home)
		}
	}
	if !seen[2] || !seen[8] {
		t.Errorf("caps tried %v, want probes of 2 and 8 around the home 4", seen)
	}

	l = newSendLimit(4, 16)
	idle := func(limit int) time.Duration {
		if limit == 4 {
			return 2 * idleWindow
		}
		return time.Millisecond
	}
	if got := runLimit(&l, 20, idle); got != 4 {
		t.Errorf("home cap %d after idle windows, want 4: nothing is compared after an idle window", got)
	}
	if l.cur != 4 {
		t.Errorf("cap %d after idle windows, want the home 4", l.cur)
	}
}

// The cap stays within two and the pool's size (one for a pool of one), whatever it starts
// from.
func TestSendLimitBounds(t *testing.T) {
	for _, tc := range []struct{ initial, max, wantCur, wantMax int }{
		{2, 10, 2, 10}, {0, 10, 2, 10}, {1, 10, 2, 10}, {20, 10, 10, 10}, {2, 1, 1, 1}, {2, 0, 1, 1},
	} {
		l := newSendLimit(tc.initial, tc.max)
		if l.cur != tc.wantCur || l.max != tc.wantMax {
			t.Errorf("newSendLimit(%d, %d) = cap %d, max %d; want %d, %d", tc.initial, tc.max, l.cur, l.max, tc.wantCur, tc.wantMax)
		}
	}
}
