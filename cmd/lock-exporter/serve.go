package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/common/promslog"
	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

const serveSynopsis = "lock-exporter [flags]"

// serveFlags are the flags only the server has.
type serveFlags struct {
	listen        []string
	telemetryPath string
	webConfig     string
	lifecycle     bool
	maxConns      int
	maxRequests   int
	logs          *promslog.Config
	version       bool
}

// define adds the server's flags to the shared ones.
func (sf *serveFlags) define(fs *pflag.FlagSet, st *settings) {
	defineConfigFlags(fs, st)
	c := &st.cfg
	cli.IntVar(fs, &c.Scan.TopK, "scan.top-k", c.Scan.TopK, fmt.Sprintf("stalest keys per namespace exported as lock_key_idle_seconds{key} (1 to %d)", collectors.MaxTopK))
	fs.StringVar(&c.Scan.Mode, "scan.mode", c.Scan.Mode, "auto: serve namespaces whose pattern has a literal prefix from a lock-key index that Redis's client tracking keeps current (RESP3, Redis 6+), walking the rest; walk: walk the keyspace on every scrape")
	fs.StringVar(&c.Scan.Feed, "scan.feed", c.Scan.Feed, "the index's change feed: auto (keyspace notifications where CONFIG GET shows notify-keyspace-events has K and g$hx, else client tracking); tracking (RESP3 client tracking); notifications (keyspace notifications; trusted where CONFIG GET is refused). The exporter never changes the server's configuration")
	cli.IntVar(fs, &c.Scan.BackstopKeysPerSecond, "scan.backstop-keys-per-second", c.Scan.BackstopKeysPerSecond, "keys per second the index's backstop walk visits (it rests 10 minutes between walks); it corrects and counts what the change feed missed; 0: no backstop walk")
	cli.IntVar(fs, &c.Scan.IndexKeyBudget, "scan.index-key-budget", c.Scan.IndexKeyBudget, "keys the index may hold, all namespaces together; past it, the namespace with the most is walked on every scrape")
	fs.Var(&c.Scan.TakeoverWindow, "scan.takeover-window", "an acquisition of a lock key this soon after its hold ended expired or overwritten counts as a takeover (lock_key_takeovers_total); a file namespace's takeover_window overrides it")
	fs.Var(&c.Scan.TimeoutOffset, "scan.timeout-offset", "subtracted from X-Prometheus-Scrape-Timeout-Seconds so the answer arrives in time")
	cli.IntVar(fs, &c.Scan.MaxConcurrentTargets, "scan.max-concurrent-targets", c.Scan.MaxConcurrentTargets,
		fmt.Sprintf("targets scanned at once on %s (0: %d); scrapes beyond it wait until their deadline", exporter.ScrapePath, exporterconfig.DefaultMaxConcurrentTargets))
	cli.StringListVar(fs, &sf.listen, "web.listen-address", []string{exporter.DefaultListenAddress}, "address to serve on, [host]:port; repeatable")
	fs.StringVar(&sf.telemetryPath, "web.telemetry-path", "/metrics", "path of the metrics endpoint")
	fs.StringVar(&sf.webConfig, "web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth); see https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md")
	cli.BoolVar(fs, &sf.lifecycle, "web.enable-lifecycle", false, "serve POST "+exporter.ReloadPath+" to reload the configuration (off: anyone who reaches the port could make the exporter rebuild its clients; SIGHUP reloads either way)")
	cli.IntVar(fs, &sf.maxConns, "web.max-connections", exporter.DefaultMaxConnections, "connections open at once; more are closed at accept (counted in lock_exporter_http_requests_refused_total)")
	cli.IntVar(fs, &sf.maxRequests, "web.max-requests", exporter.DefaultMaxRequests, "scrapes of the metrics path and /scrape in flight at once; more are answered 503")
	sf.logs = cli.AddLogFlags(fs, "info")
	cli.BoolVar(fs, &sf.version, "version", false, "print the version and exit")
}

// runServe parses the server's flags into a validated configuration and serves it.
func runServe(ctx context.Context, e *env, args []string) int {
	var sf serveFlags
	st, fs, err := parseSettings(e, "lock-exporter", args, sf.define, false)
	if sf.version {
		printVersion(e.Stdout)
		return exitOK
	}
	if err != nil {
		return handleParseError(e, "", serveSynopsis+"\n       lock-exporter COMMAND [flags]   (commands: "+commandNames()+")", fs, err)
	}
	opts, err := serveOptions(e, st, fs, sf)
	if err != nil {
		return usageError(e, "", err)
	}
	// SIGHUP (and POST /-/reload with --web.enable-lifecycle) read the configuration file
	// again, with the same flags.
	opts.Reloads = e.reloads
	opts.Reload = func() (exporter.Scope, error) { return reloadScope(e, args) }
	return serveExitStatus(e, exporter.Serve(ctx, opts))
}

// serveOptions checks what only the server's flags say and builds what Serve serves.
func serveOptions(e *env, st *settings, fs *pflag.FlagSet, sf serveFlags) (exporter.Options, error) {
	if fs.NArg() > 0 {
		return exporter.Options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	web := exporter.Web{ListenAddresses: sf.listen, TelemetryPath: sf.telemetryPath, ConfigFile: sf.webConfig,
		EnableLifecycle: sf.lifecycle, MaxConnections: sf.maxConns, MaxRequests: sf.maxRequests,
		Named: func(flag string, value any) string { return cli.Named(fs, flag, value) }}
	if err := web.Validate(); err != nil {
		return exporter.Options{}, err
	}
	scope, err := serveScope(st, fs)
	if err != nil {
		return exporter.Options{}, err
	}
	sf.logs.Writer = e.Stderr
	return exporter.Options{
		Config:      scope.Config,
		Web:         web,
		Logger:      promslog.New(sf.logs),
		Listening:   e.Listening,
		HTTPLimits:  e.httpLimits,
		TargetsOnly: scope.TargetsOnly,
	}, nil
}

// serveScope is what the server scans for these settings: with targets and no Redis of its own,
// /metrics serves the exporter's own metrics only.
func serveScope(st *settings, fs *pflag.FlagSet) (exporter.Scope, error) {
	targetsOnly := !scansDefaultRedis(st, fs)
	if !targetsOnly && len(st.cfg.Namespaces) == 0 {
		// Validate let this pass as an exporter of targets alone, but a --redis.* flag asked for
		// the default Redis to be scanned as well, and it has no namespaces of its own.
		return exporter.Scope{}, errors.New("no namespace configured for the redis section's Redis: give --namespace NAME=PATTERN or namespaces in --config.file")
	}
	return exporter.Scope{Config: st.cfg, TargetsOnly: targetsOnly}, nil
}

// reloadScope reads the configuration again as at start: the same flags and environment over
// the configuration file's current content.
func reloadScope(e *env, args []string) (exporter.Scope, error) {
	var sf serveFlags
	st, fs, err := parseSettings(e, "lock-exporter", args, sf.define, false)
	if err != nil {
		return exporter.Scope{}, err
	}
	return serveScope(st, fs)
}

// serveExitStatus maps Serve's result to the exit status: 2 for options it could not use, 1 for
// a failure to serve (a port already taken).
func serveExitStatus(e *env, err error) int {
	switch {
	case errors.Is(err, exporter.ErrUsage):
		return usageError(e, "", err)
	case err != nil:
		fmt.Fprintf(e.Stderr, "lock-exporter: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// scansDefaultRedis reports whether /metrics scans the redis section's Redis. Without targets it
// always does (the single-Redis exporter). With targets it does only when a Redis was given — a
// redis section other than the built-in localhost:6379, a --redis.* flag or its environment
// variable — so that a multi-target exporter's own /metrics does not report a Redis nobody
// configured as down.
func scansDefaultRedis(st *settings, fs *pflag.FlagSet) bool {
	if !st.cfg.TargetsWithDefaultRedis() {
		return true
	}
	given := false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed && strings.HasPrefix(f.Name, "redis.") {
			given = true
		}
	})
	return given
}
