// Command lock-exporter is a Prometheus exporter for Redis lock keys: it scans every configured
// lock namespace and reports count, remaining TTL, idle time, keys without expiry and the
// stalest keys. See docs/exporter.md.
//
//	lock-exporter [flags]                     serve /metrics
//	lock-exporter inspect [flags] [NAMESPACE] list a namespace's live locks, stalest first
//	lock-exporter demo [flags]                run the demo workload and serve its metrics
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure: Redis unreachable for inspect, a port already taken
	exitUsage   = 2 // bad flags, environment or configuration
)

// env is what a command may touch of the process, so tests can run commands in-process.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// listening, when set, receives the bound addresses once the server accepts connections.
	listening func(addrs []string)
	// extra, when set, is served on the metrics path next to the exporter's own metrics (the
	// demo's lease library metrics).
	extra prometheus.Gatherer
	// httpLimits, when set, replaces defaultHTTPLimits (tests shorten the idle timeout).
	httpLimits *httpLimits
}

// command is one subcommand. Adding one (say, demo) is one entry in commands and a run function.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"inspect", "list a namespace's live locks, stalest first, with TTL, idle time and fence value", runInspect},
		{"demo", "run a demo workload (five lock patterns with injected faults) and serve its metrics", runDemo},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs dial failures itself; the scanner already reports them as lock_exporter_up 0
	// and one warning per failed scan, so its own lines would only repeat them.
	redis.SetLogger(quietRedisLogger{})
	os.Exit(run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

// run dispatches to a subcommand, or serves when the first argument is a flag or absent.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, c := range commands() {
			if c.name == args[0] {
				return c.run(ctx, e, args[1:])
			}
		}
		return usageError(e, "", fmt.Errorf("unknown command %q (commands: %s; no command serves /metrics)", args[0], commandNames()))
	}
	return runServe(ctx, e, args)
}

func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// usageError prints the one line a bad invocation gets and returns exitUsage.
func usageError(e *env, cmd string, err error) int {
	prefix := "lock-exporter"
	if cmd != "" {
		prefix += " " + cmd
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", prefix, usageMessage(err))
	return exitUsage
}

var (
	// pflag says: invalid argument "x" for "--scan.batch-size" flag: strconv.ParseInt: ...
	pflagInvalid = regexp.MustCompile(`^invalid argument (".*") for "(-[^"]+)" flag: (.*)$`)
	strconvError = regexp.MustCompile(`strconv\.Parse\w+: parsing ".*": (invalid syntax|value out of range)`)
)

// usageMessage is err on one line, phrased as "setting value: problem".
func usageMessage(err error) string {
	// Redacted last-ditch: a message may quote a flag or file value that holds a URL password.
	msg := exporterconfig.RedactMessage(strings.Join(strings.Fields(err.Error()), " "))
	msg = strings.TrimPrefix(msg, exporterconfig.ErrInvalid.Error()+": ")
	if m := pflagInvalid.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("%s %s: %s", m[2], m[1], m[3])
	}
	return strconvError.ReplaceAllStringFunc(msg, func(s string) string {
		if strings.HasSuffix(s, "out of range") {
			return "number out of range"
		}
		return "not a number"
	})
}

// quietRedisLogger drops go-redis' internal log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// newLogger builds the process logger from --log.level and --log.format.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log.level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "logfmt":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log.format %q: want logfmt or json", format)
}
