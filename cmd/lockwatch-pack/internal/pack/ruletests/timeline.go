package ruletests

import (
	"slices"
	"time"
)

// state is what a test may assert about one expected alert at one evaluation.
type state int

const (
	silent state = iota
	firing
	unknown // too close to a window edge or threshold to assert on either Prometheus line
)

// span is when an alert's condition holds. Window edges fall one sample apart on Prometheus 2.x
// (closed ranges) and 3.x (left-open ranges), so each end is known to within a margin: the
// condition starts holding somewhere in [from, surelyFrom] and stops somewhere in
// [surelyUntil, until]. The zero span never holds.
type span struct {
	from, surelyFrom, surelyUntil, until time.Duration
}

// never is the span of a condition that never holds.
var never = span{}

func (s span) ever() bool { return s.until > s.from }

// alertState is the state at evaluation time t of an alert with the given for: duration: an
// alert becomes active at the first evaluation its condition holds and fires once that is for:
// ago, until the condition stops holding.
func (s span) alertState(t, forDur time.Duration) state {
	switch {
	case !s.ever(), t < s.from+forDur, t >= s.until:
		return silent
	case t >= s.surelyFrom+forDur && t < s.surelyUntil:
		return firing
	default:
		return unknown
	}
}

// expected is one alert a scenario may produce: its labels (severity included), when its
// condition holds, and its value.
type expected struct {
	alert   string
	labels  map[string]string
	holds   span
	forDur  time.Duration
	value   float64
	settled time.Duration // from when value is exact (a window filled); firing earlier is not asserted
}

func (e expected) state(t time.Duration) state {
	st := e.holds.alertState(t, e.forDur)
	if st == firing && t < e.settled {
		return unknown
	}
	return st
}

// evalTimes returns the evaluation times a scenario asserts on: for every expected alert, the
// last evaluation before it may fire, the first at which it must (and its value is exact), the
// last before its condition may stop, and the first at which it must have resolved; only times
// at which every expected alert's state is known, within [0, end], on multiples of step.
func evalTimes(exp []expected, step, end time.Duration) []time.Duration {
	var cands []time.Duration
	for _, e := range exp {
		if !e.holds.ever() {
			continue
		}
		firstFiring := max(e.holds.surelyFrom+e.forDur, e.settled)
		cands = append(cands, e.holds.from+e.forDur-step, firstFiring, e.holds.surelyUntil-step, e.holds.until)
	}
	var times []time.Duration
	for _, c := range cands {
		c = roundUp(c, step)
		if c < 0 || c > end || slices.Contains(times, c) {
			continue
		}
		if !slices.ContainsFunc(exp, func(e expected) bool { return e.state(c) == unknown }) {
			times = append(times, c)
		}
	}
	slices.Sort(times)
	return times
}

func roundUp(t, step time.Duration) time.Duration {
	if t <= 0 {
		return t
	}
	return (t + step - 1) / step * step
}
