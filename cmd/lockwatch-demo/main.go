// Command lockwatch-demo runs a demo workload — five lock patterns from the seeds, with injected
// faults — against a Redis (its own redis-server unless --redis.addr is given), and serves the
// workload's lease library metrics and the exporter's scan of the demo keys on one /metrics,
// through the same server lock-exporter runs (internal/exporter). It is a command of its own so
// that the production lock-exporter binary links no demo or fault-injection code.
//
//	lockwatch-demo [flags]    (make demo)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/cli"
	"github.com/lockwatch/lockwatch/internal/demo"
	"github.com/lockwatch/lockwatch/internal/exporter"
)

const synopsis = "lockwatch-demo [flags]"

// Exit statuses, as lock-exporter's.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure: no redis-server, a port already taken
	exitUsage   = 2 // bad flags or environment
)

// env is what the command may touch of the process, so tests can run it in-process.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// listening, when set, receives the bound addresses once the demo serves /metrics.
	listening func(addrs []string)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs dial failures itself; the lease library and the scanner report them.
	redis.SetLogger(quietRedisLogger{})
	os.Exit(run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

// quietRedisLogger drops go-redis' internal log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// flags are the demo's settings.
type flags struct {
	redisAddr   string
	listen      string
	duration    time.Duration
	statusEvery time.Duration
	logLevel    string
}

// run is the whole command: parse, start Redis when needed, run the workload and serve.
func run(ctx context.Context, e *env, args []string) int {
	fl, code, ok := parseFlags(e, args)
	if !ok {
		return code
	}
	logger, err := cli.NewLogger(e.stderr, fl.logLevel, "logfmt")
	if err != nil {
		return usageError(e, err)
	}
	if fl.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fl.duration)
		defer cancel()
	}

	redisAddr, where := fl.redisAddr, "given by --redis.addr; only "+demo.DefaultPrefix+"* keys are touched"
	if redisAddr == "" {
		srv, err := demo.StartRedis(ctx)
		if err != nil {
			return failure(e, err)
		}
		defer srv.Stop()
		redisAddr, where = srv.Addr(), "a redis-server started for the demo, removed on exit"
	}
	password := e.getenv(cli.EnvPrefix + "REDIS_PASSWORD")
	w, err := demo.New(demo.Options{Addr: redisAddr, Password: password, Logger: logger})
	if err != nil {
		return usageError(e, fmt.Errorf("--redis.addr %q: %v", redactURL(redisAddr), err))
	}
	cfg, err := demo.ExporterConfig(redisAddr, w.Namespaces())
	if err != nil {
		w.Close()
		return usageError(e, err)
	}
	cfg.Redis.Password = password

	srv := startExporter(exporter.Options{
		Config: cfg,
		Web:    exporter.Web{ListenAddresses: []string{fl.listen}, TelemetryPath: "/metrics"},
		Logger: logger,
		Extra:  w.Registry(),
	})
	defer srv.stop()
	addrs, err := srv.waitListening()
	if err != nil {
		w.Close()
		return exporterError(e, err)
	}
	if e.listening != nil {
		e.listening(addrs)
	}
	printBanner(e, w, redactURL(redisAddr), where, addrs)
	return runWorkload(ctx, e, w, srv, fl.statusEvery)
}

// parseFlags parses args with LOCK_EXPORTER_* fallbacks and checks every value before anything
// starts, so a typo does not first start a redis-server. ok is false when the command is done
// (help printed, or a usage error with code).
func parseFlags(e *env, args []string) (fl flags, code int, ok bool) {
	fs := cli.NewFlagSet("lockwatch-demo")
	fs.StringVar(&fl.redisAddr, "redis.addr", "", "Redis to run the demo on (host:port or redis:// URL); only keys under "+demo.DefaultPrefix+" are touched and removed on exit (default: start a redis-server from PATH on a free loopback port)")
	fs.StringVar(&fl.listen, "web.listen-address", "127.0.0.1:9866", "address to serve /metrics on")
	fs.DurationVar(&fl.duration, "duration", 0, "stop after this long (default: run until Ctrl-C)")
	fs.DurationVar(&fl.statusEvery, "status.interval", 5*time.Second, "how often to print the status line")
	fs.StringVar(&fl.logLevel, "log.level", "warn", "debug, info, warn or error (warn shows the lease library's renew warnings and abandonments)")
	if err := cli.ParseWithEnv(fs, args, e.getenv); err != nil {
		if cli.IsHelp(err) {
			cli.PrintUsage(e.stdout, synopsis, fs)
			return fl, exitOK, false
		}
		return fl, usageError(e, err), false
	}
	var err error
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case fl.duration < 0:
		err = fmt.Errorf("--duration %q: must not be negative", fl.duration)
	case fl.statusEvery <= 0:
		err = fmt.Errorf("--status.interval %q: must be positive", fl.statusEvery)
	default:
		err = exporter.CheckListenAddresses([]string{fl.listen})
	}
	if err != nil {
		return fl, usageError(e, err), false
	}
	return fl, exitOK, true
}

// runWorkload runs the workload until ctx ends or the exporter stops on its own, printing the
// status line every statusEvery, then removes the demo keys.
func runWorkload(ctx context.Context, e *env, w *demo.Workload, srv *exporterRun, statusEvery time.Duration) int {
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
			fmt.Fprintln(e.stdout, w.StatusLine())
		case err := <-srv.done:
			// The server stopped on its own: a serve error.
			srv.finished = true
			code = exporterError(e, err)
			stopWork()
		case <-workCtx.Done():
		}
	}
	stopWork()
	if err := <-ran; err != nil {
		code = failure(e, err)
	}
	fmt.Fprintln(e.stdout, w.StatusLine())
	srv.stop()
	fmt.Fprintln(e.stdout, "demo stopped; demo keys removed")
	return code
}

// exporterRun is internal/exporter serving in the background.
type exporterRun struct {
	listening chan []string
	done      chan error
	cancel    context.CancelFunc
	// finished is set once done has been received from.
	finished bool
}

// startExporter serves opts until stop is called. The exporter runs under its own context so
// that it keeps serving while the workload removes its keys.
func startExporter(opts exporter.Options) *exporterRun {
	ctx, cancel := context.WithCancel(context.Background())
	r := &exporterRun{listening: make(chan []string, 1), done: make(chan error, 1), cancel: cancel}
	opts.Listening = func(addrs []string) { r.listening <- addrs }
	go func() {
		err := exporter.Serve(ctx, opts)
		if err == nil && ctx.Err() == nil {
			err = errors.New("stopped serving")
		}
		r.done <- err
	}()
	return r
}

// waitListening returns the bound addresses, or why the exporter could not serve.
func (r *exporterRun) waitListening() ([]string, error) {
	select {
	case addrs := <-r.listening:
		return addrs, nil
	case err := <-r.done:
		r.finished = true
		return nil, err
	}
}

// stop shuts the exporter down and waits for it, unless it already stopped on its own.
func (r *exporterRun) stop() {
	r.cancel()
	if !r.finished {
		<-r.done
		r.finished = true
	}
}

// exporterError reports why the exporter did not serve: unusable options are usage errors.
func exporterError(e *env, err error) int {
	if errors.Is(err, exporter.ErrUsage) {
		return usageError(e, err)
	}
	return failure(e, err)
}

// usageError prints the one line a bad invocation gets and returns exitUsage.
func usageError(e *env, err error) int {
	fmt.Fprintf(e.stderr, "lockwatch-demo: %s\n", cli.UsageMessage(err))
	return exitUsage
}

// failure prints a runtime failure on one line and returns exitFailure.
func failure(e *env, err error) int {
	fmt.Fprintf(e.stderr, "lockwatch-demo: %v\n", err)
	return exitFailure
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
