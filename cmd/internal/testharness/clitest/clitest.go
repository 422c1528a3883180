// Package clitest runs lockwatch's commands in-process for their tests: a cli.Env with the
// test's environment variables whose output the test reads back.
package clitest

import (
	"context"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// runTimeout ends a command a test runs that has not returned by then: a give-up time, so that a
// command that never returns fails its test instead of hanging the package.
const runTimeout = 30 * time.Second

// NewEnv is a cli.Env whose environment variables are vars (any other reads as empty) and whose
// output goes to the returned buffers.
func NewEnv(vars map[string]string) (e cli.Env, stdout, stderr *testkit.SyncBuffer) {
	stdout, stderr = &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	return cli.Env{
		Stdout: stdout,
		Stderr: stderr,
		Getenv: func(k string) string { return vars[k] },
	}, stdout, stderr
}

// Run runs a command in-process, as its main would, on NewEnv(vars), and returns its exit
// status and output. run is the command's run function with its arguments bound.
func Run(t testing.TB, vars map[string]string, run func(context.Context, cli.Env) int) (code int, stdout, stderr string) {
	t.Helper()
	e, out, errOut := NewEnv(vars)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	code = run(ctx, e)
	return code, out.String(), errOut.String()
}
