package rules

import "testing"

// TestHumanSeconds: a wait threshold reads in the description as the duration it is, for any
// finite positive threshold packconfig accepts. Past time.Duration's 292 years the conversion
// overflowed ("-2562047h47m16.854775808s"), and below a nanosecond it read "0s".
func TestHumanSeconds(t *testing.T) {
	for in, want := range map[float64]string{
		1:      "1s",
		1.5:    "1.5s",
		0.25:   "250ms",
		90:     "1m30s",
		1e-300: "1e-300s",
		1e-10:  "1e-10s",
		1e9:    "277777h46m40s",
		1e10:   "1e+10s",
		1e12:   "1e+12s",
		1e308:  "1e+308s",
	} {
		if got := humanSeconds(in); got != want {
			t.Errorf("humanSeconds(%g) = %q, want %q", in, got, want)
		}
	}
}
