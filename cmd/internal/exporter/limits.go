package exporter

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/lockwatch/lockwatch/collectors"
)

// HTTPLimits are the HTTP server's timeouts and header bound. Without them a client could hold
// connections open for ever: 187 idle keep-alive connections once exhausted a 200-descriptor
// limit, and /metrics stopped answering.
type HTTPLimits struct {
	// ReadHeader bounds reading a request's headers, ReadBody the whole request.
	ReadHeader, ReadBody time.Duration
	// WriteMargin is added to the scan timeout for the response: a scrape may scan for the
	// whole scan timeout before it writes.
	WriteMargin time.Duration
	// Idle closes a keep-alive connection that sends no request for this long.
	Idle time.Duration
	// MaxHeaderBytes bounds request headers (Go's default is 1 MiB).
	MaxHeaderBytes int
}

// DefaultHTTPLimits are the production limits.
var DefaultHTTPLimits = HTTPLimits{
	ReadHeader:     5 * time.Second,
	ReadBody:       10 * time.Second,
	WriteMargin:    10 * time.Second,
	Idle:           60 * time.Second,
	MaxHeaderBytes: 32 << 10,
}

func newHTTPServer(h http.Handler, scanTimeout time.Duration, limits *HTTPLimits, logger *slog.Logger) *http.Server {
	l := httpLimits(limits)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.ReadBody,
		// Each scan-serving request sets its own write deadline from the live configuration
		// (see liveGeneration.handler); this one covers the other paths and the start-up scan
		// timeout.
		WriteTimeout:   scanTimeoutOrDefault(scanTimeout) + l.WriteMargin,
		IdleTimeout:    l.Idle,
		MaxHeaderBytes: l.MaxHeaderBytes,
		ErrorLog:       slogErrorLog(logger),
	}
}

// httpLimits is limits, or DefaultHTTPLimits when nil.
func httpLimits(limits *HTTPLimits) HTTPLimits {
	if limits == nil {
		return DefaultHTTPLimits
	}
	return *limits
}

// scanTimeoutOrDefault is the scan timeout a write deadline allows for, collectors' default
// when unset.
func scanTimeoutOrDefault(t time.Duration) time.Duration {
	if t <= 0 {
		return collectors.DefaultTimeout
	}
	return t
}
