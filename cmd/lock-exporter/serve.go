package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/cli"
	"github.com/lockwatch/lockwatch/internal/exporter"
	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

const serveSynopsis = "lock-exporter [flags]"

// serveFlags are the flags only the server has.
type serveFlags struct {
	listen        []string
	telemetryPath string
	webConfig     string
	logLevel      string
	logFormat     string
	version       bool
}

// runServe parses the server's flags into a validated configuration and serves it.
func runServe(ctx context.Context, e *env, args []string) int {
	var sf serveFlags
	st, fs, err := parseSettings(e, "lock-exporter", args, func(fs *pflag.FlagSet, st *settings) {
		defineConfigFlags(fs, st)
		c := &st.cfg
		fs.IntVar(&c.Scan.TopK, "scan.top-k", c.Scan.TopK, fmt.Sprintf("stalest keys per namespace exported as lock_key_idle_seconds{key} (1 to %d)", collectors.MaxTopK))
		fs.Var(&c.Scan.TimeoutOffset, "scan.timeout-offset", "subtracted from X-Prometheus-Scrape-Timeout-Seconds so the answer arrives in time")
		fs.IntVar(&c.Scan.MaxConcurrentTargets, "scan.max-concurrent-targets", c.Scan.MaxConcurrentTargets,
			fmt.Sprintf("targets scanned at once on %s (0: %d); scrapes beyond it wait until their deadline", exporter.ScrapePath, exporterconfig.DefaultMaxConcurrentTargets))
		fs.StringSliceVar(&sf.listen, "web.listen-address", []string{exporter.DefaultListenAddress}, "address to serve on, [host]:port; repeatable")
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
	web := exporter.Web{ListenAddresses: sf.listen, TelemetryPath: sf.telemetryPath, ConfigFile: sf.webConfig}
	if err := web.Validate(); err != nil {
		return usageError(e, "", err)
	}
	logger, err := cli.NewLogger(e.stderr, sf.logLevel, sf.logFormat)
	if err != nil {
		return usageError(e, "", err)
	}
	err = exporter.Serve(ctx, exporter.Options{
		Config:     st.cfg,
		Web:        web,
		Logger:     logger,
		Version:    buildVersion(),
		Revision:   buildRevision(),
		Listening:  e.listening,
		HTTPLimits: e.httpLimits,
		// With targets and no Redis of its own, /metrics serves the exporter's own metrics only.
		TargetsOnly: !scansDefaultRedis(st, fs),
	})
	switch {
	case errors.Is(err, exporter.ErrUsage):
		return usageError(e, "", err)
	case err != nil:
		fmt.Fprintf(e.stderr, "lock-exporter: %v\n", err)
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
	if len(st.cfg.Targets) == 0 || !st.cfg.Redis.IsDefault() {
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
