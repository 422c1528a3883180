package exporter

import (
	"testing"
	"time"
)

func TestScrapeTimeout(t *testing.T) {
	const offset = 500 * time.Millisecond
	tests := []struct {
		header string
		offset time.Duration
		want   time.Duration
	}{
		{"", offset, 10 * time.Second},
		{"garbage", offset, 10 * time.Second},
		{"-3", offset, 10 * time.Second},
		{"5", offset, 4500 * time.Millisecond},
		{"2.5", offset, 2 * time.Second},
		{"0.4", offset, 200 * time.Millisecond}, // offset larger than the timeout: half of it
		{"60", offset, 10 * time.Second},        // capped by the ceiling
		// A longer scrape timeout never gives a shorter scan: past 0.5s the offset used to
		// leave 1ms (0.501) where 0.5 left 250ms. The offset takes at most half.
		{"0.501", offset, 250500 * time.Microsecond},
		{"0.6", offset, 300 * time.Millisecond},
		{"1", offset, 500 * time.Millisecond},
		{"1.2", offset, 700 * time.Millisecond},
		// Values no Prometheus sends but any client can: not a negative (already expired)
		// deadline, which reported a healthy Redis as lock_exporter_up 0.
		{"NaN", offset, 10 * time.Second},
		{"NaN", 0, 10 * time.Second},
		{"Inf", 0, 10 * time.Second},
		{"+Inf", offset, 10 * time.Second},
		{"1e10", 0, 10 * time.Second}, // overflows a time.Duration
		{"1e300", 0, 10 * time.Second},
		{"1e-300", offset, 10 * time.Second}, // rounds to a zero Duration
		{"2", 0, 2 * time.Second},
	}
	for _, tt := range tests {
		if got := scrapeTimeout(tt.header, 10*time.Second, tt.offset); got != tt.want {
			t.Errorf("scrapeTimeout(%q, offset %v) = %v, want %v", tt.header, tt.offset, got, tt.want)
		}
	}
}
