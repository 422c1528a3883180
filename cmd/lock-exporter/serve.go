package main

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
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

const serveSynopsis = "lock-exporter [flags]"

// defaultListenAddress is the exporter's port.
const defaultListenAddress = ":9866"

// healthPath answers 200 while the process serves; whether Redis answers is lock_exporter_up.
const healthPath = "/-/healthy"

// shutdownGrace bounds how long in-flight scrapes may finish after SIGTERM.
const shutdownGrace = 5 * time.Second

// httpLimits are the HTTP server's timeouts and header bound. Without them a client could hold
// connections open for ever: 187 idle keep-alive connections once exhausted a 200-descriptor
// limit, and /metrics stopped answering.
type httpLimits struct {
	// readHeader bounds reading a request's headers, readBody the whole request.
	readHeader, readBody time.Duration
	// writeMargin is added to the scan timeout for the response: a scrape may scan for the
	// whole scan timeout before it writes.
	writeMargin time.Duration
	// idle closes a keep-alive connection that sends no request for this long.
	idle time.Duration
	// maxHeaderBytes bounds request headers (Go's default is 1 MiB).
	maxHeaderBytes int
}

var defaultHTTPLimits = httpLimits{
	readHeader:     5 * time.Second,
	readBody:       10 * time.Second,
	writeMargin:    10 * time.Second,
	idle:           60 * time.Second,
	maxHeaderBytes: 32 << 10,
}

func newHTTPServer(h http.Handler, scanTimeout time.Duration, limits *httpLimits, logger *slog.Logger) *http.Server {
	l := defaultHTTPLimits
	if limits != nil {
		l = *limits
	}
	if scanTimeout <= 0 {
		scanTimeout = collectors.DefaultTimeout
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.readBody,
		WriteTimeout:      scanTimeout + l.writeMargin,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    l.maxHeaderBytes,
		ErrorLog:          slogErrorLog(logger),
	}
}

// serveFlags are the flags only the server has.
type serveFlags struct {
	listen        []string
	telemetryPath string
	webConfig     string
	logLevel      string
	logFormat     string
	version       bool
}

func runServe(ctx context.Context, e *env, args []string) int {
	var sf serveFlags
	st, fs, err := parseSettings(e, "lock-exporter", args, func(fs *pflag.FlagSet, st *settings) {
		defineConfigFlags(fs, st)
		c := &st.cfg
		fs.IntVar(&c.Scan.TopK, "scan.top-k", c.Scan.TopK, fmt.Sprintf("stalest keys per namespace exported as lock_key_idle_seconds{key} (1 to %d)", collectors.MaxTopK))
		fs.Var(&c.Scan.TimeoutOffset, "scan.timeout-offset", "subtracted from X-Prometheus-Scrape-Timeout-Seconds so the answer arrives in time")
		fs.IntVar(&c.Scan.MaxConcurrentTargets, "scan.max-concurrent-targets", c.Scan.MaxConcurrentTargets,
			fmt.Sprintf("targets scanned at once on %s (0: %d); scrapes beyond it wait until their deadline", scrapePath, exporterconfig.DefaultMaxConcurrentTargets))
		fs.StringSliceVar(&sf.listen, "web.listen-address", []string{defaultListenAddress}, "address to serve on, [host]:port; repeatable")
		fs.StringVar(&sf.telemetryPath, "web.telemetry-path", "/metrics", "path of the metrics endpoint")
		fs.StringVar(&sf.webConfig, "web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth); see https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md")
		fs.StringVar(&sf.logLevel, "log.level", "info", "debug, info, warn or error")
		fs.StringVar(&sf.logFormat, "log.format", "logfmt", "logfmt or json")
		fs.BoolVar(&sf.version, "version", false, "print the version and exit")
	}, false)
	if sf.version {
		fmt.Fprintf(e.stdout, "lock-exporter %s (revision %s)\n", buildVersion(), buildRevision())
		return exitOK
	}
	if err != nil {
		return handleParseError(e, "", serveSynopsis+"\n       lock-exporter COMMAND [flags]   (commands: "+commandNames()+")", fs, err)
	}
	if fs.NArg() > 0 {
		return usageError(e, "", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if sf.telemetryPath == "" || sf.telemetryPath[0] != '/' || sf.telemetryPath == healthPath || sf.telemetryPath == scrapePath {
		return usageError(e, "", fmt.Errorf("--web.telemetry-path %q: want an absolute path other than %s and %s", sf.telemetryPath, healthPath, scrapePath))
	}
	if err := checkListenAddresses(sf.listen); err != nil {
		return usageError(e, "", err)
	}
	if err := web.Validate(sf.webConfig); err != nil {
		return usageError(e, "", fmt.Errorf("--web.config.file %q: %v", sf.webConfig, err))
	}
	logger, err := newLogger(e.stderr, sf.logLevel, sf.logFormat)
	if err != nil {
		return usageError(e, "", err)
	}

	// With targets and no Redis of its own, /metrics serves the exporter's own metrics only.
	var scanner *collectors.Scanner
	if scansDefaultRedis(st, fs) {
		client, err := st.cfg.NewClient()
		if err != nil {
			return usageError(e, "", err)
		}
		defer client.Close()
		opts := st.cfg.ScannerOptions()
		opts.Logger = logger
		if scanner, err = collectors.NewScanner(client, opts); err != nil {
			return usageError(e, "", err)
		}
		defer scanner.Close()
	}
	targets, err := newTargetSet(st.cfg, logger)
	if err != nil {
		return usageError(e, "", err)
	}
	defer targets.Close()

	static := prometheus.NewRegistry()
	static.MustRegister(
		collectors.NewBuildInfoCollector(buildVersion(), buildRevision()),
		promcollectors.NewGoCollector(),
		promcollectors.NewProcessCollector(promcollectors.ProcessCollectorOpts{}),
	)
	var gatherer prometheus.Gatherer = static
	if e.extra != nil {
		gatherer = prometheus.Gatherers{static, e.extra}
	}
	mux := http.NewServeMux()
	mux.Handle(sf.telemetryPath, &metricsHandler{
		scanner: scanner,
		static:  gatherer,
		ceiling: time.Duration(st.cfg.Scan.Timeout),
		offset:  time.Duration(st.cfg.Scan.TimeoutOffset),
		logger:  logger,
	})
	if len(targets.order) > 0 {
		mux.Handle(scrapePath, &targetHandler{
			targets: targets,
			limiter: newScanLimiter(st.cfg.MaxConcurrentTargetScans()),
			metrics: newTargetMetrics(static, targets),
			ceiling: time.Duration(st.cfg.Scan.Timeout),
			offset:  time.Duration(st.cfg.Scan.TimeoutOffset),
			logger:  logger,
		})
	}
	mux.HandleFunc(healthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "OK")
	})
	if sf.telemetryPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "lock-exporter",
			Description: "Prometheus exporter for Redis lock keys: count, TTL, idle time and keys without expiry per lock namespace",
			Version:     buildVersion(),
			Profiling:   "false",
			Links: append([]web.LandingLinks{
				{Address: sf.telemetryPath, Text: "Metrics"},
				{Address: healthPath, Text: "Health"},
			}, targetLinks(targets)...),
		})
		if err != nil {
			return usageError(e, "", err)
		}
		mux.Handle("/", landing)
	}

	var listeners []net.Listener
	var addrs []string
	for _, a := range sf.listen {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, open := range listeners {
				open.Close()
			}
			fmt.Fprintf(e.stderr, "lock-exporter: --web.listen-address %q: %v\n", a, err)
			return exitFailure
		}
		listeners = append(listeners, l)
		addrs = append(addrs, l.Addr().String())
	}
	server := newHTTPServer(mux, time.Duration(st.cfg.Scan.Timeout), e.httpLimits, logger)
	served := make(chan error, 1)
	webConfig := sf.webConfig
	go func() {
		served <- web.ServeMultiple(listeners, server, &web.FlagConfig{
			WebListenAddresses: &sf.listen,
			WebConfigFile:      &webConfig,
		}, logger)
	}()
	redisDesc := "none (targets only)"
	if scanner != nil {
		redisDesc = describeRedis(st)
	}
	logger.Info("lock-exporter started", "version", buildVersion(), "namespaces", len(st.cfg.Namespaces),
		"redis", redisDesc, "targets", len(targets.order), "telemetry_path", sf.telemetryPath)
	if e.listening != nil {
		e.listening(addrs)
	}

	select {
	case err := <-served:
		fmt.Fprintf(e.stderr, "lock-exporter: serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
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
	return exitOK
}

// checkListenAddresses refuses --web.listen-address values that can never be listened on, so
// that a typo is a usage error (exit 2) like any other bad flag value. What only the system can
// refuse when net.Listen runs — a port already taken, a host that is not local or does not
// resolve — stays a runtime failure (exit 1).
func checkListenAddresses(addrs []string) error {
	if len(addrs) == 0 {
		// pflag turns an empty value into an empty list; serving on nothing is never meant.
		return errors.New(`--web.listen-address "": want [host]:port, e.g. :9866`)
	}
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		if err != nil || port == "" {
			// An empty port would make net.Listen pick a random one; ":0" says so explicitly.
			return fmt.Errorf("--web.listen-address %q: want [host]:port, e.g. :9866", a)
		}
		// LookupPort accepts exactly the ports net.Listen does: 0 to 65535, or a service name
		// from /etc/services, read locally.
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("--web.listen-address %q: port %q: want a number from 0 to 65535", a, port)
		}
	}
	return nil
}

// describeRedis names the Redis endpoints for the start-up log line, never credentials.
func describeRedis(st *settings) string {
	r := st.cfg.Redis
	redacted := func(addrs []string) []string {
		out := make([]string, len(addrs))
		for i, a := range addrs {
			out[i] = exporterconfig.RedactAddr(a)
		}
		return out
	}
	switch {
	case len(r.ClusterAddrs) > 0:
		return fmt.Sprintf("cluster %v", redacted(r.ClusterAddrs))
	case len(r.SentinelAddrs) > 0:
		return fmt.Sprintf("sentinel %v master %s", redacted(r.SentinelAddrs), r.SentinelMaster)
	}
	return exporterconfig.RedactAddr(r.Addr)
}
