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
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs dial failures itself; the lease library and the scanner report them.
	redis.SetLogger(quietRedisLogger{})
	e := cli.ProcessEnv()
	os.Exit(run(ctx, &e, os.Args[1:]))
}

// quietRedisLogger drops go-redis' internal log lines.
type quietRedisLogger struct{}

func (quietRedisLogger) Printf(context.Context, string, ...any) {}

// run is the whole command: parse and check the flags, then run one demo session.
func run(ctx context.Context, e *cli.Env, args []string) int {
	fl, err := parseFlags(e, args)
	if errors.Is(err, errHelpShown) {
		return exitOK
	}
	if err != nil {
		return report(e, err)
	}
	return runSession(ctx, e, fl)
}
