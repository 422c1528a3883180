package duration

import (
	"strconv"
	"testing"
	"time"
)

// TestSecondsIsExact checks that every whole number of milliseconds up to 200 s, and a few
// microsecond and nanosecond values, convert to the double that prints as their decimal
// (time.Duration.Seconds gives 1.1179999999999999 for 1118ms).
func TestSecondsIsExact(t *testing.T) {
	for ms := range 200_000 {
		d := time.Duration(ms) * time.Millisecond
		want := strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
		if got := strconv.FormatFloat(Seconds(d), 'f', -1, 64); got != want {
			t.Fatalf("Seconds(%s) prints %s, want %s", d, got, want)
		}
	}
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{1868 * time.Millisecond, "1.868"},
		{1118 * time.Millisecond, "1.118"},
		{1500123 * time.Microsecond, "1.500123"},
		{7*time.Second + 1, "7.000000001"},
		{-time.Nanosecond, "-0.000000001"},
		{0, "0"},
	} {
		if got := strconv.FormatFloat(Seconds(tt.d), 'f', -1, 64); got != tt.want {
			t.Errorf("Seconds(%s) prints %s, want %s", tt.d, got, tt.want)
		}
	}
}
