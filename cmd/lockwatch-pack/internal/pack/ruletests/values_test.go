package ruletests

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestSamplesParseBack checks that promtool's own parser expands the notation written for a
// series into exactly its samples, bit for bit: a counter whose terms parsed to slightly
// different floats would seem to reset, and rate() would see traffic where there is none.
func TestSamplesParseBack(t *testing.T) {
	tl := timeline{step: time.Minute, n: 90}
	tests := []struct {
		name string
		s    samples
	}{
		{"counter of thirds that stops", tl.counter(rateUntil(1.0/3, 40*time.Minute, 0))},
		{"counter of sixths that slows", tl.counter(rateUntil(1.0/6, 79*time.Minute, 0.05))},
		{"one burst", tl.counter(once(10, 2*time.Minute))},
		{"gauge bad for a while", tl.gauge(1, 0, 2*time.Minute, 9*time.Minute)},
		{"series that goes stale and comes back", tl.gauge(1, stale, 4*time.Minute, 20*time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := parser.NewParser(parser.Options{}).ParseSeriesDesc("x " + tt.s.String())
			if err != nil {
				t.Fatalf("%q: %v", tt.s.String(), err)
			}
			if len(got) != len(tt.s) {
				t.Fatalf("%q expands to %d values, want %d", tt.s.String(), len(got), len(tt.s))
			}
			for i, v := range got {
				want := tt.s[i]
				if math.IsNaN(want) != math.IsNaN(v.Value) || (!math.IsNaN(want) && v.Value != want) {
					t.Fatalf("value %d of %q is %v, want %v", i, tt.s.String(), v.Value, want)
				}
			}
		})
	}
}

func TestHumanizeDuration(t *testing.T) {
	tests := []struct {
		seconds float64
		want    string
	}{
		{0, "0s"},
		{0.25, "250ms"},
		{3.97, "3.97s"},
		{1200, "20m 0s"},
		{238.2, "3m 58s"},
		{90061, "1d 1h 1m 1s"},
	}
	for _, tt := range tests {
		if got := humanizeDuration(tt.seconds); got != tt.want {
			t.Errorf("humanizeDuration(%v) = %q, want %q", tt.seconds, got, tt.want)
		}
	}
}
