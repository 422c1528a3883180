package ruletests

import (
	"math"
	"strconv"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
)

// abandonments shows LockAbandonmentsSustained: abandonments at twice min_count per long window,
// continuing, fire once the long window holds min_count and for: has passed, and resolve once a
// short window holds none; half of min_count per long window does not fire, nor does one burst of
// twice min_count (it shows in the short window for less than for:, which must be longer).
func (g *gen) abandonments() []scenario {
	c := g.cfg.Alerts.Abandonments
	long, short, forDur := time.Duration(c.Long), time.Duration(c.Short), time.Duration(c.For)
	perLong := func(n float64) float64 { return n / float64(long/g.step) } // per step, n per long window
	badUntil := roundUp(long+forDur, g.step) + 4*g.step
	sc := scenario{name: "sustained fires and resolves; a trickle under min_count and one burst do not",
		tl: g.timelineTo(badUntil + short)}
	sustained := span{from: long/2 - g.step, surelyFrom: long/2 + g.step, surelyUntil: badUntil + g.step, until: badUntil + short}
	burstAt := 2 * g.step
	actors := []struct {
		name  string
		inc   func(time.Duration) float64
		holds span
	}{
		{"sustained", rateUntil(perLong(2*c.MinCount), badUntil, 0), sustained},
		{"trickle", rateUntil(perLong(c.MinCount/2), badUntil, 0), never},
		{"burst", once(2*c.MinCount, burstAt), never},
	}
	for _, a := range actors {
		lbls := g.libLabels(a.name)
		sc.add("lock_abandoned_total", lbls, sc.tl.counter(a.inc))
		sc.expect = append(sc.expect, expected{alert: rules.AlertAbandonmentsSustained, labels: keep(lbls, c.Severity, g.libraryKeep()...),
			holds: a.holds, forDur: forDur, value: 2 * c.MinCount, settled: long + g.step})
	}
	for _, lbls := range g.libUnselected("unselected") {
		sc.add("lock_abandoned_total", lbls, sc.tl.counter(actors[0].inc))
	}
	return []scenario{sc}
}

// waitP99 shows LockWaitP99High with histograms whose buckets are placed around the threshold:
// acquires that all wait between the threshold and a few times it fire (their p99 is above it
// over both windows) once for: has passed and resolve when waits are short again; waits under
// half the threshold do not fire, nor do slow waits with fewer acquires than min_acquires.
func (g *gen) waitP99() []scenario {
	c := g.cfg.Alerts.WaitP99
	th, long, short, forDur := c.ThresholdSeconds, time.Duration(c.Long), time.Duration(c.Short), time.Duration(c.For)
	upper, slowP99 := slowBucket(th)
	bounds := []float64{th / 4, th / 2, th, upper, math.Inf(1)}
	badUntil := roundUp(forDur, g.step) + 4*g.step
	sc := scenario{name: "slow waits fire and resolve; fast waits and too few acquires do not", tl: g.timelineTo(badUntil + short)}
	busy := max(2*c.MinAcquires, 10)
	actors := []waitActor{
		{"slow", busy, true, span{from: g.step, surelyFrom: 2 * g.step, surelyUntil: badUntil + g.step, until: badUntil + short}},
		{"fast", busy, false, never},
	}
	if c.MinAcquires > 0 {
		actors = append(actors, waitActor{"under-acquire-guard", c.MinAcquires / 4 / float64(long/g.step), true, never})
	}
	for _, a := range actors {
		lbls := g.libLabels(a.name)
		g.waitHistogram(&sc, lbls, bounds, a.perStep, a.slow, badUntil)
		sc.expect = append(sc.expect, expected{alert: rules.AlertWaitP99High, labels: keep(lbls, c.Severity, g.libraryKeep()...),
			holds: a.holds, forDur: forDur, value: slowP99})
	}
	for _, lbls := range g.libUnselected("unselected") {
		g.waitHistogram(&sc, lbls, bounds, busy, true, badUntil)
	}
	return []scenario{sc}
}

// waitActor is one namespace of the wait scenario: its acquires a step, whether they are slow
// until the scenario recovers, and when the alert's condition holds for it.
type waitActor struct {
	name    string
	perStep float64
	slow    bool
	holds   span
}

// waitHistogram adds lock_acquire_wait_seconds of perStep acquires a step: until badUntil
// between bounds[2] and bounds[3] when slowFirst, between bounds[0] and bounds[1] otherwise
// and afterwards.
func (g *gen) waitHistogram(sc *scenario, lbls map[string]string, bounds []float64, perStep float64, slowFirst bool, badUntil time.Duration) {
	slowBuckets := []float64{0, 0, 0, perStep, perStep}
	fastBuckets := []float64{0, perStep, perStep, perStep, perStep}
	for i, le := range bounds {
		i := i
		sc.add("lock_acquire_wait_seconds_bucket", with(lbls, "le", leLabel(le)), sc.tl.counter(func(t time.Duration) float64 {
			if slowFirst && t <= badUntil {
				return slowBuckets[i]
			}
			return fastBuckets[i]
		}))
	}
	sc.add("lock_acquire_wait_seconds_count", lbls, sc.tl.counter(func(time.Duration) float64 { return perStep }))
}

// slowBucket is the upper bound of the bucket the slow waits fall in, a few times the
// threshold, and the p99 histogram_quantile interpolates in it. A p99 of a minute or more is
// described in whole seconds, so a bound is chosen whose p99 is not within rounding of one.
func slowBucket(th float64) (upper, p99 float64) {
	for _, f := range []float64{4, 4.5, 5, 6, 7} {
		upper, p99 = f*th, th+(f*th-th)*0.99
		if p99 < 60 || math.Abs(p99-math.Round(p99)) > 1e-3 {
			break
		}
	}
	return upper, p99
}

func leLabel(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'g', -1, 64)
}

// once is an increment function: n in the step ending at at, nothing otherwise.
func once(n float64, at time.Duration) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		if t == at {
			return n
		}
		return 0
	}
}
