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
