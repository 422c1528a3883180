package exporter

import (
	"context"
	"log"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockwatch/lockwatch/collectors"
)

// ScrapeTimeoutHeader is how Prometheus tells a target its scrape timeout, in seconds.
const ScrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// metricsHandler serves one scrape: the scan is bounded by the scrape's own deadline, so it is
// built into a registry made for the request.
type metricsHandler struct {
	scanner *collectors.Scanner // nil: only the static metrics
	static  prometheus.Gatherer // build info, Go and process metrics
	ceiling time.Duration
	offset  time.Duration
	logger  *slog.Logger
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout(r.Header.Get(ScrapeTimeoutHeader), h.ceiling, h.offset))
	defer cancel()
	reg := prometheus.NewRegistry()
	if h.scanner != nil { // nil: a multi-target exporter with no Redis of its own
		reg.MustRegister(h.scanner.Collector(ctx))
	}
	promhttp.HandlerFor(prometheus.Gatherers{h.static, reg}, promhttp.HandlerOpts{
		// A failed scan is reported as lock_exporter_up 0, not as an HTTP error: the other
		// metrics are still worth having.
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slogErrorLog(h.logger),
	}).ServeHTTP(w, r)
}

// scrapeTimeout is the time a scan may take: Prometheus' scrape timeout less offset, but never
// less than half the timeout (so a longer timeout never gives a shorter scan), and never more
// than ceiling. Without a usable header (a curl, an old Prometheus, a value that is not a
// positive finite number of seconds) the ceiling applies.
func scrapeTimeout(header string, ceiling, offset time.Duration) time.Duration {
	secs, err := strconv.ParseFloat(header, 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 1) {
		return ceiling
	}
	if secs >= ceiling.Seconds()+offset.Seconds() {
		return ceiling // also keeps the conversion below from overflowing
	}
	total := time.Duration(secs * float64(time.Second))
	if total <= 0 {
		return ceiling // rounds to nothing
	}
	return min(max(total-offset, total/2), ceiling)
}

// slogErrorLog adapts logger for APIs that want a *log.Logger.
func slogErrorLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.Handler(), slog.LevelError)
}
