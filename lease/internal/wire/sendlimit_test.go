package wire

import (
	"math/rand/v2"
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

// noisyPace is a pace whose windows take mean(limit) milliseconds, each off by a normal error
// of cv times that (seeded, so every run of the test sees the same windows): a machine where
// other processes deschedule the client now and then. It also counts the windows run at each
// cap.
type noisyPace struct {
	mean    func(limit int) float64
	cv      float64
	rnd     *rand.Rand
	windows map[int]int
}

func newNoisyPace(seed uint64, cv float64, mean func(limit int) float64) *noisyPace {
	return &noisyPace{mean: mean, cv: cv, rnd: rand.New(rand.NewPCG(seed, 26)), windows: map[int]int{}}
}

func (p *noisyPace) pace(limit int) time.Duration {
	p.windows[limit]++
	ms := p.mean(limit) * (1 + p.cv*p.rnd.NormFloat64())
	return time.Duration(max(ms, 0.1) * float64(time.Millisecond))
}

// homeMoves drives l through windows at pace and counts how often its home cap moved.
func homeMoves(l *sendLimit, windows int, pace func(limit int) time.Duration) int {
	moves, home := 0, l.home
	now := time.Unix(0, 0)
	l.answered(0)
	l.endWindow(now)
	for range windows {
		now = now.Add(pace(l.cur))
		for !l.answered(16) {
		}
		l.endWindow(now)
		if l.home != home {
			moves, home = moves+1, l.home
		}
	}
	return moves
}

// Noise alone does not move the cap: with every cap equally fast and windows off by 30% at
// random (a client beside CPU hogs), a home that moved whenever a probe beat its average would
// move about 18 times in 200 windows and spend an eighth of them at the pool size, where a
// scarce CPU pays a system call per command.
func TestSendLimitIgnoresNoise(t *testing.T) {
	const seeds, windows = 20, 200
	moves, atMax, all := 0, 0, 0
	for seed := range uint64(seeds) {
		l := newSendLimit(2, 16)
		p := newNoisyPace(seed, 0.3, func(int) float64 { return 50 })
		moves += homeMoves(&l, windows, p.pace)
		atMax += p.windows[16]
		for _, n := range p.windows {
			all += n
		}
	}
	if perRun := float64(moves) / seeds; perRun > 4 {
		t.Errorf("home moved %.1f times per %d windows on an equal pace with 30%% noise, want at most 4", perRun, windows)
	}
	if share := float64(atMax) / float64(all); share > 0.06 {
		t.Errorf("%.0f%% of the windows ran at the pool size on an equal pace, want at most 6%%", 100*share)
	}
}

// A real difference still moves the cap through noise: on a quiet machine (windows off by 2%)
// a pool-size cap 10% faster draws the home up to it; on a loaded one (30% noise) a cap that
// costs more the higher it goes keeps the home low.
func TestSendLimitFindsDifferencesThroughNoise(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cv    float64
		mean  map[int]float64
		check func(home int) bool
		want  string
	}{
		{"quiet, the pool size 10% faster", 0.02, map[int]float64{2: 55, 4: 53, 8: 51, 16: 50},
			func(home int) bool { return home == 16 }, "16"},
		{"loaded, higher caps slower", 0.3, map[int]float64{2: 50, 4: 60, 8: 75, 16: 90},
			func(home int) bool { return home <= 4 }, "at most 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missed := 0
			for seed := range uint64(20) {
				l := newSendLimit(2, 16)
				p := newNoisyPace(seed, tc.cv, func(limit int) float64 { return tc.mean[limit] })
				homeMoves(&l, 200, p.pace)
				if !tc.check(l.home) {
					missed++
				}
			}
			if missed > 2 {
				t.Errorf("home cap not %s after 200 windows for %d of 20 seeds", tc.want, missed)
			}
		})
	}
}

// A probe faster once is probed again at the next probe, and the home moves only when it is
// faster the second time too.
func TestSendLimitConfirmsAProbe(t *testing.T) {
	l := newSendLimit(4, 16)
	now := time.Unix(0, 0)
	window := func(d time.Duration) {
		now = now.Add(d)
		for !l.answered(windowCmds) {
		}
		l.endWindow(now)
	}
	l.answered(0)
	l.endWindow(now)
	for range probeEvery - 1 {
		window(10 * time.Millisecond)
	}
	first := l.cur
	if first == l.home {
		t.Fatalf("no probe after %d home windows", probeEvery-1)
	}
	window(5 * time.Millisecond) // the probe: twice as fast
	if l.home != 4 || l.promising != first {
		t.Fatalf("after one faster probe of %d: home %d, promising %d; want home 4, promising %d", first, l.home, l.promising, first)
	}
	for range probeEvery - 1 {
		window(10 * time.Millisecond)
	}
	if l.cur != first {
		t.Fatalf("probed %d after a promising %d, want %d again", l.cur, first, first)
	}
	window(5 * time.Millisecond)
	if l.home != first || l.promising != 0 {
		t.Errorf("after two faster probes of %d: home %d, promising %d; want home %d", first, l.home, l.promising, first)
	}
}
