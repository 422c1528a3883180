package ruletests

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// stale marks a sample that ends a series (a target gone): promtool's "stale" value.
var stale = math.NaN()

// samples are a series' values at 0, step, 2*step, …
type samples []float64

// timeline builds the samples of a scenario of n steps.
type timeline struct {
	step time.Duration
	n    int // samples 0..n
}

func (tl timeline) end() time.Duration { return time.Duration(tl.n) * tl.step }

// gauge is a gauge at value bad from `from` until (not including) `until`, good otherwise.
func (tl timeline) gauge(good, bad float64, from, until time.Duration) samples {
	s := make(samples, tl.n+1)
	for i := range s {
		s[i] = good
		if t := time.Duration(i) * tl.step; t >= from && t < until {
			s[i] = bad
		}
	}
	return s
}

// counter is a counter from 0 that grows by inc(t) in the step ending at t.
func (tl timeline) counter(inc func(t time.Duration) float64) samples {
	s := make(samples, tl.n+1)
	for i := 1; i < len(s); i++ {
		s[i] = s[i-1] + inc(time.Duration(i)*tl.step)
	}
	return s
}

// rateUntil is an increment function: perStep up to and including until, after it afterwards.
func rateUntil(perStep float64, until time.Duration, after float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		if t <= until {
			return perStep
		}
		return after
	}
}

// String writes samples in promtool's expanding notation: a run of values that promtool's
// "a+dxn" reproduces exactly (it adds d n times, as counter does) as one term. Every number is
// written so that it parses back to the same float, so the series promtool builds are these
// samples bit for bit: a counter never appears to drop where one term ends and the next begins.
func (s samples) String() string {
	var parts []string
	for i := 0; i < len(s); {
		if math.IsNaN(s[i]) {
			parts = append(parts, "stale")
			i++
			continue
		}
		j := i
		if i+1 < len(s) && !math.IsNaN(s[i+1]) {
			d := s[i+1] - s[i]
			for j+1 < len(s) && !math.IsNaN(s[j+1]) && s[j]+d == s[j+1] {
				j++
			}
			parts = append(parts, run(s[i], d, j-i))
		} else {
			parts = append(parts, number(s[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

func run(start, d float64, n int) string {
	switch {
	case n == 0:
		return number(start)
	case d == 0:
		return number(start) + "x" + strconv.Itoa(n)
	case d < 0:
		return number(start) + "-" + number(-d) + "x" + strconv.Itoa(n)
	default:
		return number(start) + "+" + number(d) + "x" + strconv.Itoa(n)
	}
}

func number(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
