package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
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

// target is one configured Redis deployment, served by its shared scanner (see scanners.go): its
// own client (connection pool) and scanner, so scrapes of one target share its pass in flight
// and never wait on another target's pool.
type target struct {
	name string
	*sharedScanner
}

// targetSet is every configured target of one generation. Clients dial on demand, so a target
// nobody scrapes holds no connection.
type targetSet struct {
	byName map[string]*target
	order  []string
	pool   *scanners
}

// newTargetSet takes each target's scanner from pool: the one already serving it when its
// settings did not change, so a reload keeps the target's pass in flight and its scan slot.
func newTargetSet(cfg exporterconfig.Config, pool *scanners, logger *slog.Logger) (*targetSet, error) {
	ts := &targetSet{byName: make(map[string]*target, len(cfg.Targets)), pool: pool}
	for _, tc := range cfg.Targets {
		tcfg := cfg.ForTarget(tc)
		sh, err := pool.get("target "+tc.Name, tcfg, func() (redis.UniversalClient, *collectors.Scanner, error) {
			client, err := cfg.NewTargetClient(tc)
			if err != nil {
				return nil, nil, err
			}
			opts := tcfg.ScannerOptions()
			// Targets are scanned on demand under scan.max_concurrent_targets; an index would
			// keep a change feed and a build walk per target outside that cap, so targets walk.
			opts.Mode = collectors.ModeWalk
			opts.Logger = logger.With("target", tc.Name)
			scanner, err := collectors.NewScanner(client, opts)
			if err != nil {
				client.Close()
				return nil, nil, err
			}
			return client, scanner, nil
		})
		if err != nil {
			ts.Close()
			return nil, fmt.Errorf("target %q: %w", tc.Name, err)
		}
		ts.byName[tc.Name] = &target{name: tc.Name, sharedScanner: sh}
		ts.order = append(ts.order, tc.Name)
	}
	return ts, nil
}

// Close gives the targets' scanners back to the pool, which closes those no generation uses.
func (ts *targetSet) Close() {
	for _, t := range ts.byName {
		ts.pool.put(t.sharedScanner)
	}
}

// errBusy: the global cap on concurrent target scans stayed full until the scrape's deadline.
var errBusy = errors.New("too many target scans in flight")

// scanLimiter caps the targets scanned at once. A target takes one slot for as long as any
// scrape of it runs: the scanner already makes concurrent scrapes of one target share a pass,
// so a second Prometheus replica scraping the same target joins without a slot of its own.
// One limiter serves every generation, so a reload neither frees the slots of scans in flight
// nor hands out new ones beside them; a reload that changes scan.max_concurrent_targets
// resizes it (setLimit), and scans in flight above a lowered cap finish first.
type scanLimiter struct {
	mu    sync.Mutex
	limit int
	used  int
	freed chan struct{} // closed (and replaced) when a slot frees or the limit rises
}

func newScanLimiter(n int) *scanLimiter {
	return &scanLimiter{limit: n, freed: make(chan struct{})}
}

// take waits for a slot until ctx ends (errBusy).
func (l *scanLimiter) take(ctx context.Context) error {
	for {
		l.mu.Lock()
		if l.used < l.limit {
			l.used++
			l.mu.Unlock()
			return nil
		}
		wake := l.freed
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return errBusy
		}
	}
}

// give hands a slot back.
func (l *scanLimiter) give() {
	l.mu.Lock()
	l.used--
	l.wakeLocked()
	l.mu.Unlock()
}

// setLimit changes the cap.
func (l *scanLimiter) setLimit(n int) {
	l.mu.Lock()
	l.limit = n
	l.wakeLocked()
	l.mu.Unlock()
}

func (l *scanLimiter) wakeLocked() {
	close(l.freed)
	l.freed = make(chan struct{})
}

// inUse is the number of slots taken.
func (l *scanLimiter) inUse() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
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
		if err := l.take(ctx); err != nil {
			return err
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
		l.give()
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
