// Command lockwatch-demo runs a demo workload — five lock patterns from the seeds, with injected
// faults — against a Redis (its own redis-server unless --redis.addr is given), and serves the
// workload's lease library metrics and the exporter's scan of the demo keys on one /metrics,
// through the same server lock-exporter runs (cmd/internal/exporter). It is a command of its own so
// that the production lock-exporter binary links no demo or fault-injection code.
//
//	lockwatch-demo [flags]    (make demo)
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
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

// run is the whole command: parse and check the flags, then run one demo session.
func run(ctx context.Context, e *env, args []string) int {
	fl, err := parseFlags(e, args)
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if err != nil {
		return report(e, err)
	}
	return runSession(ctx, e, fl)
}
