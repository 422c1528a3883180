package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/common/promslog"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/demo"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// runSession is one demo: start Redis when none is given, connect the workload, serve
// /metrics, then run the workload until ctx ends (Ctrl-C or --duration).
func runSession(ctx context.Context, e *cli.Env, fl flags) int {
	fl.logs.Writer = e.Stderr
	logger := promslog.New(fl.logs)
	ctx, cancel := withDuration(ctx, fl.duration)
	defer cancel()
	target, err := openRedis(ctx, fl.redisAddr)
	if err != nil {
		return report(e, err)
	}
	defer target.stop()
	w, cfg, err := newWorkload(target.addr, e.Getenv(envRedisPassword), logger)
	if err != nil {
		return report(e, err)
	}
	srv, addrs, err := serveMetrics(w, cfg, fl.listen, logger)
	if err != nil {
		w.Close()
		return report(e, err)
	}
	defer srv.stop()
	announce(e, w, target, addrs)
	return runWorkload(ctx, e, w, srv, "http://"+addrs[0]+"/metrics", fl.statusEvery)
}

// withDuration bounds ctx by --duration; zero runs until ctx ends.
func withDuration(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// redisTarget is the Redis the demo runs on, how the banner describes it, and how to let it go.
type redisTarget struct {
	addr, where string
	stop        func()
}

// openRedis uses the Redis given by --redis.addr, or starts the demo's own redis-server.
func openRedis(ctx context.Context, addr string) (redisTarget, error) {
	if addr != "" {
		return redisTarget{addr: addr, where: "given by --redis.addr; only " + demo.DefaultPrefix + "* keys are touched", stop: func() {}}, nil
	}
	srv, err := demo.StartRedis(ctx)
	if err != nil {
		return redisTarget{}, err
	}
	return redisTarget{addr: srv.Addr(), where: "a redis-server started for the demo, removed on exit", stop: srv.Stop}, nil
}

// redisCheckTimeout bounds the demo's first PING: a Redis that answers nothing in that time
// (a firewall dropping packets) fails the demo at start like one that refuses the connection.
const redisCheckTimeout = 5 * time.Second

// newWorkload connects the workload to addr and builds the exporter configuration that watches
// its namespaces there.
func newWorkload(addr, password string, logger *slog.Logger) (*demo.Workload, exporterconfig.Config, error) {
	w, err := demo.New(demo.Options{Addr: addr, Password: password, Logger: logger})
	if err != nil {
		return nil, exporterconfig.Config{}, usage(fmt.Errorf("--redis.addr %q: %v", redactURL(addr), err))
	}
	ping, cancel := context.WithTimeout(context.Background(), redisCheckTimeout)
	defer cancel()
	if err := w.Ping(ping); err != nil {
		w.Close()
		return nil, exporterconfig.Config{}, fmt.Errorf("--redis.addr %q: cannot reach Redis: %v", redactURL(addr), err)
	}
	cfg, err := demo.ExporterConfig(addr, w.Namespaces())
	if err != nil {
		w.Close()
		return nil, exporterconfig.Config{}, usage(err)
	}
	cfg.Redis.Password = password
	return w, cfg, nil
}

// serveMetrics serves the exporter's scan of cfg and the workload's library metrics on one
// /metrics at listen, and returns once it listens, with the bound addresses.
func serveMetrics(w *demo.Workload, cfg exporterconfig.Config, listen string, logger *slog.Logger) (*exporterRun, []string, error) {
	srv := startExporter(exporter.Options{
		Config: cfg,
		Web:    exporter.Web{ListenAddresses: []string{listen}, TelemetryPath: "/metrics"},
		Logger: logger,
		// The demo's build: what go run or go build stamped.
		Extra: w.Registry(),
	})
	addrs, err := srv.waitListening()
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	return srv, addrs, nil
}

// runWorkload runs the workload until ctx ends or the exporter stops on its own, printing the
// status line every statusEvery with the lifecycle counters read from metricsURL, then removes
// the demo keys.
func runWorkload(ctx context.Context, e *cli.Env, w *demo.Workload, srv *exporterRun, metricsURL string, statusEvery time.Duration) int {
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(workCtx) }()
	ticker := time.NewTicker(statusEvery)
	defer ticker.Stop()
	code := exitOK
	for workCtx.Err() == nil {
		select {
		case <-ticker.C:
			fmt.Fprintln(e.Stdout, w.StatusLine(readLifecycle(workCtx, metricsURL)))
		case err := <-srv.done:
			// The server stopped on its own: a serve error.
			srv.finished = true
			code = report(e, err)
			stopWork()
		case <-workCtx.Done():
		}
	}
	stopWork()
	removed := true
	if err := <-ran; err != nil {
		code = report(e, err)
		removed = false
	}
	fmt.Fprintln(e.Stdout, w.StatusLine(readLifecycle(context.Background(), metricsURL)))
	srv.stop()
	if removed {
		fmt.Fprintln(e.Stdout, "demo stopped; demo keys removed")
	} else {
		fmt.Fprintln(e.Stdout, "demo stopped; demo keys not removed (see the error above)")
	}
	return code
}

// lifecycleReadTimeout bounds the status line's read of the demo's own metrics: a scrape runs
// the exporter's scan, which its own deadline bounds well below this.
const lifecycleReadTimeout = 5 * time.Second

// readLifecycle reads the exporter's lifecycle counters from the demo's metrics; a failed read
// shows as "not followed", never as zero lapses.
func readLifecycle(ctx context.Context, metricsURL string) demo.Lifecycle {
	ctx, cancel := context.WithTimeout(ctx, lifecycleReadTimeout)
	defer cancel()
	lc, err := demo.ReadLifecycle(ctx, metricsURL)
	if err != nil {
		return demo.Lifecycle{}
	}
	return lc
}
