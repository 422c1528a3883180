package exporter

import (
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestHTTPServerLimits checks the production limits: every timeout set, the write timeout longer
// than the scan may run, and a bounded header size.
func TestHTTPServerLimits(t *testing.T) {
	s := newHTTPServer(http.NotFoundHandler(), 30*time.Second, nil, slog.New(slog.DiscardHandler))
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.IdleTimeout <= 0 || s.MaxHeaderBytes <= 0 || s.MaxHeaderBytes > 1<<16 {
		t.Errorf("limits %v %v %v %d: want all set and headers bounded", s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	}
	if s.WriteTimeout <= 30*time.Second {
		t.Errorf("write timeout %v, want longer than the 30s scan timeout", s.WriteTimeout)
	}
}

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
