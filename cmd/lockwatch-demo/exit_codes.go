package main

import (
	"errors"
	"fmt"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
)

// Exit statuses, as lock-exporter's.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure: no redis-server, a port already taken
	exitUsage   = 2 // bad flags or environment
)

// usageError marks an error as the invocation's fault (exitUsage) rather than the runtime's.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// usage marks err as a bad invocation.
func usage(err error) error { return usageError{err} }

// report prints err on one line and returns its exit status: exitUsage for a bad invocation
// (the exporter's unusable options included), exitFailure otherwise.
func report(e *cli.Env, err error) int {
	var u usageError
	if errors.As(err, &u) || errors.Is(err, exporter.ErrUsage) {
		fmt.Fprintf(e.Stderr, "lockwatch-demo: %s\n", cli.UsageMessage(err))
		return exitUsage
	}
	fmt.Fprintf(e.Stderr, "lockwatch-demo: %v\n", err)
	return exitFailure
}
