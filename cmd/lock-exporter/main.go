// Command lock-exporter is a Prometheus exporter for Redis lock keys: it scans every configured
// lock namespace and reports count, remaining TTL, idle time, keys without expiry and the
// stalest keys. See docs/exporter.md.
//
//	lock-exporter [flags]                     serve /metrics
//	lock-exporter inspect [flags] [NAMESPACE] list a namespace's live locks, stalest first
//
// The demo workload is its own command, lockwatch-demo (make demo), so that this binary links
// no demo, fault-injection or test code.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure: Redis unreachable for inspect, a port already taken
	exitUsage   = 2 // bad flags, environment or configuration
)

// env is what a command may touch of the process, so tests can run commands in-process: the
// part every lockwatch command has, and what only the server takes.
type env struct {
	cli.Env
	// httpLimits, when set, replaces exporter.DefaultHTTPLimits (tests shorten the idle timeout).
	httpLimits *exporter.HTTPLimits
	// reloads asks the server to read its configuration again: SIGHUP in the real process.
	reloads <-chan struct{}
}

// command is one subcommand. Adding one is one entry in commands and a run function.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"inspect", "list a namespace's live locks, stalest first, with TTL, idle time and fence value", runInspect},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs dial failures itself; the scanner already reports them as lock_exporter_up 0
	// and one warning per failed scan, so its own lines would only repeat them.
	redis.SetLogger(quietRedisLogger{})
	stampVersion()
	os.Exit(run(ctx, &env{Env: cli.ProcessEnv(), reloads: hangups()}, os.Args[1:]))
}

// hangups turns each SIGHUP into a reload request, as Prometheus and its exporters do. A SIGHUP
// that arrives while a reload is pending adds nothing: the pending one reads the newest file.
func hangups() <-chan struct{} {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGHUP)
	reloads := make(chan struct{}, 1)
	go func() {
		for range signals {
			select {
			case reloads <- struct{}{}:
			default:
			}
		}
	}()
	return reloads
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
	fmt.Fprintf(e.Stderr, "%s: %s\n", prefix, cli.UsageMessage(err))
	return exitUsage
}

// quietRedisLogger drops go-redis' internal log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}
