package exporter

import (
	"testing"
	"time"
)

func TestScrapeTimeout(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 10 * time.Second},
		{"garbage", 10 * time.Second},
		{"-3", 10 * time.Second},
		{"5", 4500 * time.Millisecond},
		{"2.5", 2 * time.Second},
		{"0.4", 200 * time.Millisecond}, // offset larger than the timeout: half of it
		{"60", 10 * time.Second},        // capped by the ceiling
	}
	for _, tt := range tests {
		if got := scrapeTimeout(tt.header, 10*time.Second, 500*time.Millisecond); got != tt.want {
			t.Errorf("scrapeTimeout(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}
