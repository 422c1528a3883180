package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/internal/demo"
)

const demoSynopsis = "lock-exporter demo [flags]"

// runDemo runs the demo workload against a Redis (its own redis-server unless --redis.addr is
// given) and serves the workload's library metrics and the exporter's scan of the demo keys on
// one /metrics, through the same server as the plain command.
func runDemo(ctx context.Context, e *env, args []string) int {
	fs := pflag.NewFlagSet("lock-exporter demo", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	addr := fs.String("redis.addr", "", "Redis to run the demo on (host:port or redis:// URL); only keys under "+demo.DefaultPrefix+" are touched and removed on exit (default: start a redis-server from PATH on a free loopback port)")
	listen := fs.String("web.listen-address", "127.0.0.1:9866", "address to serve /metrics on")
	duration := fs.Duration("duration", 0, "stop after this long (default: run until Ctrl-C)")
	statusEvery := fs.Duration("status.interval", 5*time.Second, "how often to print the status line")
	logLevel := fs.String("log.level", "warn", "debug, info, warn or error (warn shows the lease library's renew warnings and abandonments)")
	if err := parseWithEnv(e, fs, args); err != nil {
		return handleParseError(e, "demo", demoSynopsis, fs, err)
	}
	if fs.NArg() > 0 {
		return usageError(e, "demo", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	// Checked before anything starts, so a typo does not first start a redis-server.
	if err := checkListenAddresses([]string{*listen}); err != nil {
		return usageError(e, "demo", err)
	}
	if *duration < 0 {
		return usageError(e, "demo", fmt.Errorf("--duration %q: must not be negative", duration.String()))
	}
	if *statusEvery <= 0 {
		return usageError(e, "demo", fmt.Errorf("--status.interval %q: must be positive", statusEvery.String()))
	}
	logger, err := newLogger(e.stderr, *logLevel, "logfmt")
	if err != nil {
		return usageError(e, "demo", err)
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}

	redisAddr, where := *addr, "given by --redis.addr; only "+demo.DefaultPrefix+"* keys are touched"
	if redisAddr == "" {
		srv, err := demo.StartRedis(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "lock-exporter demo: %v\n", err)
			return exitFailure
		}
		defer srv.Stop()
		redisAddr, where = srv.Addr(), "a redis-server started for the demo, removed on exit"
	}
	password := e.getenv(envRedisPassword)
	w, err := demo.New(demo.Options{Addr: redisAddr, Password: password, Logger: logger})
	if err != nil {
		return usageError(e, "demo", fmt.Errorf("--redis.addr %q: %v", redactURL(redisAddr), err))
	}

	// The exporter half is the plain command, configured for the demo's namespaces.
	cfg, err := demo.ExporterConfig(redisAddr, w.Namespaces())
	if err != nil {
		fmt.Fprintf(e.stderr, "lock-exporter demo: %v\n", err)
		return exitFailure
	}
	dir, err := os.MkdirTemp("", "lockwatch-demo-")
	if err != nil {
		fmt.Fprintf(e.stderr, "lock-exporter demo: %v\n", err)
		return exitFailure
	}
	defer os.RemoveAll(dir)
	cfgFile := filepath.Join(dir, "exporter.yml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		fmt.Fprintf(e.stderr, "lock-exporter demo: %v\n", err)
		return exitFailure
	}
	listening := make(chan []string, 1)
	serveEnv := &env{
		stdout: e.stdout,
		stderr: e.stderr,
		// Only the password reaches the server: the demo's own flags and file say the rest, so
		// a LOCK_EXPORTER_* setting meant for a production exporter cannot redirect it.
		getenv: func(name string) string {
			if name == envRedisPassword {
				return password
			}
			return ""
		},
		listening: func(addrs []string) { listening <- addrs },
		extra:     w.Registry(),
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	served := make(chan int, 1)
	go func() {
		served <- runServe(serveCtx, serveEnv, []string{"--config.file", cfgFile, "--web.listen-address", *listen, "--log.level", *logLevel})
	}()
	var addrs []string
	select {
	case addrs = <-listening:
	case code := <-served:
		return code
	}

	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	if e.listening != nil {
		e.listening(addrs)
	}
	ran := make(chan error, 1)
	go func() { ran <- w.Run(workCtx) }()
	printBanner(e, w, redactURL(redisAddr), where, addrs)
	ticker := time.NewTicker(*statusEvery)
	defer ticker.Stop()
	code, serving := exitOK, true
	for serving && workCtx.Err() == nil {
		select {
		case <-ticker.C:
			fmt.Fprintln(e.stdout, w.StatusLine())
		case code = <-served:
			// The server stopped on its own (a serve error, already reported).
			serving = false
		case <-workCtx.Done():
		}
	}
	stopWork()
	if err := <-ran; err != nil {
		fmt.Fprintf(e.stderr, "lock-exporter demo: %v\n", err)
		code = exitFailure
	}
	fmt.Fprintln(e.stdout, w.StatusLine())
	if serving {
		stopServe()
		<-served
	}
	fmt.Fprintln(e.stdout, "demo stopped; demo keys removed")
	return code
}

func printBanner(e *env, w *demo.Workload, redisAddr, where string, addrs []string) {
	fmt.Fprintf(e.stdout, "lockwatch demo\n  Redis:   %s (%s)\n", redisAddr, where)
	for _, a := range addrs {
		fmt.Fprintf(e.stdout, "  metrics: http://%s/metrics   (lease library + exporter metrics on one endpoint)\n", a)
	}
	fmt.Fprintf(e.stdout, "  keys:    %s*\n  namespaces:\n", w.Prefix())
	for _, ns := range w.Namespaces() {
		fmt.Fprintf(e.stdout, "    %-10s %s\n", ns.Name, ns.Story)
	}
	for _, l := range append(w.StatusLegend(), demo.NextSteps(redisAddr, addrs[0], w.Namespaces())...) {
		fmt.Fprintln(e.stdout, l)
	}
	fmt.Fprintln(e.stdout, "Ctrl-C stops the demo.")
}

// redactURL hides the password of a redis:// address, which must not reach a terminal or log.
func redactURL(addr string) string {
	if !strings.Contains(addr, "://") {
		return addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
