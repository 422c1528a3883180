package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

// ScrapePath serves one configured target's metrics, as redis_exporter and blackbox_exporter do.
const ScrapePath = "/scrape"

// targetParam names the target; it is the only query parameter /scrape accepts.
const targetParam = "target"

// target is one configured Redis deployment: its own client (connection pool) and scanner, so
// scrapes of one target share its pass in flight and never wait on another target's pool.
type target struct {
	name    string
	client  redis.UniversalClient
	scanner *collectors.Scanner
	// gate holds the global scan slot while any scrape of this target runs; see scanLimiter.
	gate targetGate
}

// targetSet is every configured target, built at start-up. Clients dial on demand, so a target
// nobody scrapes holds no connection.
type targetSet struct {
	byName map[string]*target
	order  []string
}

func newTargetSet(cfg exporterconfig.Config, logger *slog.Logger) (*targetSet, error) {
	ts := &targetSet{byName: make(map[string]*target, len(cfg.Targets))}
	for _, tc := range cfg.Targets {
		client, err := cfg.NewTargetClient(tc)
		if err != nil {
			ts.Close()
			return nil, fmt.Errorf("target %q: %w", tc.Name, err)
		}
		opts := cfg.ForTarget(tc).ScannerOptions()
		opts.Logger = logger.With("target", tc.Name)
		scanner, err := collectors.NewScanner(client, opts)
		if err != nil {
			client.Close()
			ts.Close()
			return nil, fmt.Errorf("target %q: %w", tc.Name, err)
		}
		t := &target{name: tc.Name, client: client, scanner: scanner, gate: newTargetGate()}
		ts.byName[tc.Name] = t
		ts.order = append(ts.order, tc.Name)
	}
	return ts, nil
}

// Close stops every target's scans and closes its pool.
func (ts *targetSet) Close() {
	for _, t := range ts.byName {
		t.scanner.Close()
		t.client.Close()
	}
}

// errBusy: the global cap on concurrent target scans stayed full until the scrape's deadline.
var errBusy = errors.New("too many target scans in flight")

// scanLimiter caps the targets scanned at once. A target takes one slot for as long as any
// scrape of it runs: the scanner already makes concurrent scrapes of one target share a pass,
// so a second Prometheus replica scraping the same target joins without a slot of its own.
type scanLimiter struct {
	slots chan struct{}
}

func newScanLimiter(n int) *scanLimiter {
	return &scanLimiter{slots: make(chan struct{}, n)}
}

// targetGate is a target's share of the limiter: how many scrapes of it run, and a lock (a
// channel, so waiting on it respects the scrape's deadline) serialising the slot's hand-over.
type targetGate struct {
	lock  chan struct{}
	users int // guarded by lock
}

func newTargetGate() targetGate { return targetGate{lock: make(chan struct{}, 1)} }

// enter admits a scrape of t, taking a slot if t has none, or fails with errBusy when ctx ends
// first. Every successful enter is paired with leave.
func (l *scanLimiter) enter(ctx context.Context, t *target) error {
	select {
	case t.gate.lock <- struct{}{}:
	case <-ctx.Done():
		return errBusy
	}
	defer func() { <-t.gate.lock }()
	if t.gate.users == 0 {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return errBusy
		}
	}
	t.gate.users++
	return nil
}

// leave ends a scrape of t, giving the slot back with the last one. It never blocks for long:
// with users > 0 an enter holding the lock does not wait for a slot.
func (l *scanLimiter) leave(t *target) {
	t.gate.lock <- struct{}{}
	t.gate.users--
	if t.gate.users == 0 {
		<-l.slots
	}
	<-t.gate.lock
}

// targetHandler serves /scrape?target=NAME: that target's scan metrics alone, bounded by the
// scrape's deadline as /metrics is. Targets come only from the configuration, never from the
// request, so a request cannot make the exporter connect anywhere else (no SSRF) and carries no
// credentials.
type targetHandler struct {
	targets *targetSet
	limiter *scanLimiter
	metrics *targetMetrics
	ceiling time.Duration
	offset  time.Duration
	logger  *slog.Logger
}

func (h *targetHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, err := h.resolve(r)
	if err != nil {
		// One line, never quoting the request: a mistaken target may be a URL with a password.
		h.metrics.refused.Inc()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout(r.Header.Get(ScrapeTimeoutHeader), h.ceiling, h.offset))
	defer cancel()
	if err := h.limiter.enter(ctx, t); err != nil {
		h.metrics.scrapes.WithLabelValues(t.name, outcomeBusy).Inc()
		h.logger.Warn("target scrape refused", "target", t.name, "err", err)
		http.Error(w, fmt.Sprintf("target %q: %v until the scrape deadline; raise scan.max_concurrent_targets", t.name, err), http.StatusServiceUnavailable)
		return
	}
	defer h.limiter.leave(t)
	h.metrics.scrapes.WithLabelValues(t.name, outcomeServed).Inc()
	reg := prometheus.NewRegistry()
	reg.MustRegister(t.scanner.Collector(ctx))
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slogErrorLog(h.logger),
	}).ServeHTTP(w, r)
}

// resolve finds the configured target a request names. Errors never contain the request's text.
func (h *targetHandler) resolve(r *http.Request) (*target, error) {
	q := r.URL.Query()
	for k := range q {
		if k != targetParam {
			return nil, errors.New("only the target parameter is accepted: credentials and addresses come from the configuration file")
		}
	}
	names := q[targetParam]
	if len(names) != 1 || names[0] == "" {
		return nil, errors.New("want exactly one target parameter naming an entry of targets in the configuration file")
	}
	t, ok := h.targets.byName[names[0]]
	if !ok {
		return nil, errors.New("unknown target: the target parameter must name an entry of targets in the configuration file")
	}
	return t, nil
}

// targetLinks are the landing page's links to each target's scrape.
func targetLinks(ts *targetSet) []web.LandingLinks {
	var links []web.LandingLinks
	for _, name := range ts.order {
		links = append(links, web.LandingLinks{
			Address: ScrapePath + "?" + url.Values{targetParam: {name}}.Encode(),
			Text:    "Target " + name,
		})
	}
	return links
}
