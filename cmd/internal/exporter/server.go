// Package exporter serves lock-exporter's HTTP endpoints for a validated exporterconfig.Config:
// the metrics path (a scan of every namespace per scrape, plus build, Go and process metrics),
// /scrape?target=NAME for the configured targets, the health path and the landing page, with
// exporter-toolkit's TLS and basic auth.
// cmd/lock-exporter calls Serve after parsing its flags; cmd/lockwatch-demo calls it with the
// demo's namespaces and its lease library metrics, so the demo serves what production serves
// while the exporter binary links no demo code.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promcollectors "github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// shutdownGrace bounds how long in-flight scrapes may finish after the context ends.
const shutdownGrace = 5 * time.Second

// errNoTargets: Options.TargetsOnly with no targets would serve no Redis at all.
var errNoTargets = errors.New("no Redis to scan: neither a redis section nor targets")

// ErrUsage is matched (errors.Is) by Serve's errors that come from options it cannot use: the
// commands exit with status 2 for them and 1 for the rest (a port already taken).
var ErrUsage = errors.New("unusable exporter options")

// usageError marks err as ErrUsage without changing its text.
type usageError struct{ err error }

func (u usageError) Error() string        { return u.err.Error() }
func (u usageError) Unwrap() error        { return u.err }
func (u usageError) Is(target error) bool { return target == ErrUsage }

// Options are what Serve serves.
type Options struct {
	// Config is the exporter configuration; it must have passed Config.Validate.
	Config exporterconfig.Config
	Web    Web
	// Logger receives the start-up line and scrape warnings. Nil means slog.Default().
	Logger *slog.Logger
	// Extra, when set, is served on the metrics path next to the exporter's own metrics (the
	// demo serves its lease library metrics so).
	Extra prometheus.Gatherer
	// Listening, when set, receives the bound addresses once the server accepts connections.
	Listening func(addrs []string)
	// HTTPLimits, when set, replaces DefaultHTTPLimits.
	HTTPLimits *HTTPLimits
	// Reload, when set, reads the configuration again (cmd/lock-exporter re-reads its file with
	// the same flags and environment). Serve calls it on each receive from Reloads and on each
	// POST to ReloadPath (served only with Web.EnableLifecycle), and serves the result when it opens; on an error it keeps serving
	// what it served. Listen addresses, the web configuration file (read per connection
	// anyway) and the logger keep their start values.
	Reload func() (Scope, error)
	// Reloads, when set with Reload, asks for a reload on each receive (SIGHUP in
	// cmd/lock-exporter).
	Reloads <-chan struct{}
	// TargetsOnly: the metrics path scans no Redis of its own and serves the exporter's own
	// metrics only, so a multi-target exporter does not report a Redis nobody configured as
	// down. Whether a Redis was given depends on the file and on which flags were set, so the
	// command decides (lock-exporter: exporterconfig.Config.TargetsWithDefaultRedis, which
	// reads the file alone, and no --redis.* flag). Serve refuses it without targets.
	TargetsOnly bool
}

// Serve serves until ctx ends, then shuts down gracefully and returns nil. Errors from
// unusable options match ErrUsage; a failure to listen or serve does not.
func Serve(ctx context.Context, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := opts.Web.Validate(); err != nil {
		return usageError{err}
	}
	static := newStaticRegistry()
	deps := generationDeps{
		static:   static,
		targets:  newTargetMetrics(static),
		scanners: newScanners(),
		limiter:  newScanLimiter(opts.Config.MaxConcurrentTargetScans()),
		path:     opts.Web.TelemetryPath,
		limits:   httpLimits(opts.HTTPLimits),
		logger:   opts.Logger,
	}
	if opts.Extra != nil {
		deps.static = prometheus.Gatherers{static, opts.Extra}
	}
	reloads := newReloadMetrics(static)
	// Bind first: an exporter that cannot listen must fail with that one error before it
	// dials Redis or starts an index build that would log ahead of it.
	listeners, err := listen(opts.Web)
	if err != nil {
		return err
	}
	first, err := newGeneration(Scope{Config: opts.Config, TargetsOnly: opts.TargetsOnly}, deps)
	if err != nil {
		closeAll(listeners)
		return usageError{err}
	}
	deps.targets.track(first.targetNames)
	reloads.succeeded(time.Now())
	live := &liveGeneration{gen: first}
	defer live.swap(nil) // closes the last generation once its requests have ended
	r := &reloader{read: opts.Reload, live: live, deps: deps, metrics: reloads, logger: opts.Logger}
	maxConns, maxRequests := opts.Web.caps()
	refused := newRefusals(static)
	mux := newMux(opts, static, live, r, newRequestCap(maxRequests, refused.byReason.WithLabelValues(refusedRequests)))
	conns := newConnCap(maxConns, refused.byReason.WithLabelValues(refusedConnections))
	for i, l := range listeners {
		listeners[i] = conns.limitListener(l)
	}
	return serveUntilDone(ctx, opts, mux, listeners, r, conns)
}

// newMux routes the metrics path, the targets' scrape path, the health path, the reload path
// when the configuration can be reloaded and Web.EnableLifecycle is set and, unless metrics are served on "/", the landing
// page. The scan-serving routes follow the live generation, so a reload changes what they serve.
func newMux(opts Options, static *prometheus.Registry, live *liveGeneration, r *reloader, scrapes *requestCap) *http.ServeMux {
	path := opts.Web.TelemetryPath
	mux := http.NewServeMux()
	// promhttp_metric_handler_requests_total and _in_flight count the metrics path's own scrapes.
	// Both scan-serving paths share the cap on scrapes in flight.
	mux.Handle(path, promhttp.InstrumentMetricHandler(static, scrapes.wrap(live.handler(func(g *generation) http.Handler { return g.metrics }))))
	mux.Handle(ScrapePath, scrapes.wrap(live.handler((*generation).scrapeOrFallback)))
	mux.HandleFunc(healthPath, serveHealth)
	switch {
	case opts.Reload != nil && opts.Web.EnableLifecycle:
		mux.Handle(ReloadPath, r)
	case opts.Reload != nil:
		// As Prometheus answers: the path exists, the API is off.
		mux.HandleFunc(ReloadPath, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "lifecycle API is not enabled: start with --web.enable-lifecycle, or send SIGHUP", http.StatusForbidden)
		})
	}
	if path != "/" {
		mux.Handle("/", live.handler(func(g *generation) http.Handler { return g.landing }))
	}
	return mux
}

// newStaticRegistry holds the metrics that do not come from a scan: build info, Go and process.
func newStaticRegistry() *prometheus.Registry {
	static := prometheus.NewRegistry()
	static.MustRegister(
		NewBuildInfoCollector(),
		promcollectors.NewGoCollector(),
		promcollectors.NewProcessCollector(promcollectors.ProcessCollectorOpts{}),
	)
	return static
}

// serveHealth answers while the process serves; whether Redis answers is lock_exporter_up.
func serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "OK")
}

// newLandingPage is exporter-toolkit's landing page, linking the metrics, health and target paths.
func newLandingPage(metricsPath string, targets *targetSet) (*web.LandingPageHandler, error) {
	return web.NewLandingPage(web.LandingConfig{
		Name:        "lock-exporter",
		Description: "Prometheus exporter for Redis lock keys: count, TTL, idle time and keys without expiry per lock namespace",
		Version:     BuildVersion(),
		Profiling:   "false",
		Links: append([]web.LandingLinks{
			{Address: metricsPath, Text: "Metrics"},
			{Address: healthPath, Text: "Health"},
		}, targetLinks(targets)...),
	})
}

// listen binds every address, or none: on a failure the ones already bound are closed.
func listen(w Web) ([]net.Listener, error) {
	var listeners []net.Listener
	for _, a := range w.ListenAddresses {
		l, err := net.Listen("tcp", a)
		if err != nil {
			closeAll(listeners)
			return nil, fmt.Errorf("%s: %v", w.named("web.listen-address", a), err)
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// closeAll closes listeners that will not be served.
func closeAll(listeners []net.Listener) {
	for _, l := range listeners {
		l.Close()
	}
}

// serveUntilDone serves on listeners until ctx ends or serving fails, reloading the
// configuration on each receive from opts.Reloads.
func serveUntilDone(ctx context.Context, opts Options, mux http.Handler, listeners []net.Listener, r *reloader, conns *connCap) error {
	logger := opts.Logger
	listenAddrs, webConfig := opts.Web.ListenAddresses, opts.Web.ConfigFile
	// exporter-toolkit logs the web configuration's errors while serving, through its logger and
	// the server's error log (TLS handshakes): neither may quote the file.
	webLogger := withWebConfigLog(logger, webConfig)
	server := newHTTPServer(mux, time.Duration(opts.Config.Scan.Timeout), opts.HTTPLimits, webLogger)
	server.ConnState = conns.connState
	served := make(chan error, 1)
	go func() {
		served <- web.ServeMultiple(listeners, server, &web.FlagConfig{
			WebListenAddresses: &listenAddrs,
			WebConfigFile:      &webConfig,
		}, webLogger)
	}()
	logger.Info("lock-exporter started", append([]any{"version", BuildVersion()},
		append(describeScope(r.live.current()), "telemetry_path", opts.Web.TelemetryPath)...)...)
	if opts.Listening != nil {
		addrs := make([]string, len(listeners))
		for i, l := range listeners {
			addrs[i] = l.Addr().String()
		}
		opts.Listening(addrs)
	}

	reloads := opts.Reloads
	if opts.Reload == nil {
		reloads = nil // nothing to reload with: never selected
	}
	for done := false; !done; {
		select {
		case err := <-served:
			return fmt.Errorf("serve: %v", err)
		case <-reloads:
			_ = r.reload() // logged, and counted in the reload metrics
		case <-ctx.Done():
			done = true
		}
	}
	logger.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil {
		logger.Warn("shutdown", "err", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("serve", "err", err)
	}
	return nil
}
