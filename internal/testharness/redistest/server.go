// Package redistest starts real redis-server processes on free loopback ports for tests.
//
// Every server lives in its own temporary directory with persistence disabled, is bound to
// 127.0.0.1 only, and is killed when the test (or benchmark) that started it ends. The process is
// also tied to the test binary with a parent-death signal, so a crashed test run leaves no
// orphaned servers behind. The process itself is internal/redisproc's; this package answers to
// a testing.TB.
package redistest

import (
	"context"
	"os/exec"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// installHint is the one line a developer sees when the machine lacks Redis.
const installHint = "redis-server not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-server redis-tools) or run bash .ci/run"

// Server is one real redis-server process.
type Server struct {
	// Addr is host:port of the server, always on 127.0.0.1.
	Addr string

	tb   testing.TB
	proc *redisproc.Process
}

// Option adjusts how a server is started.
type Option func(*redisproc.Config)

// WithArgs appends redis-server command-line arguments, e.g. WithArgs("--requirepass", "x").
func WithArgs(args ...string) Option {
	return func(c *redisproc.Config) { c.Args = append(c.Args, args...) }
}

// WithTLS serves TLS only (the plain port is disabled) with the given PEM files; clients must
// present a certificate signed by caFile unless auth-clients is turned off with WithArgs.
func WithTLS(certFile, keyFile, caFile string) Option {
	return func(c *redisproc.Config) {
		c.TLSOnly = true
		c.Args = append(c.Args, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", caFile)
	}
}

// Binary returns the path of redis-server, failing the test with an install hint when missing.
func Binary(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatal(installHint)
	}
	return path
}

// Start launches a redis-server on a free loopback port and stops it when tb ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	Binary(tb)
	cfg := redisproc.Config{Dir: tb.TempDir()}
	for _, o := range opts {
		o(&cfg)
	}
	proc, err := redisproc.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(proc.Stop)
	return &Server{Addr: proc.Addr(), tb: tb, proc: proc}
}

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.proc.Port() }

// Dir returns the server's working directory (its log is redis.log there).
func (s *Server) Dir() string { return s.proc.Dir() }

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// DBClient returns a go-redis client for database db of the server, closed when the test ends.
func (s *Server) DBClient(tb testing.TB, db int) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Multi runs cmds through c in one MULTI/EXEC, as a neighbour of the code under test would.
func Multi(tb testing.TB, c *redis.Client, cmds [][]any) {
	tb.Helper()
	ctx := context.Background()
	_, err := c.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, args := range cmds {
			pipe.Do(ctx, args...)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Kill stops the server with SIGKILL (data is lost: persistence is off). Safe to call twice.
func (s *Server) Kill() { s.proc.Kill() }

// Restart kills the server and starts a fresh one on the same port, with an empty dataset.
func (s *Server) Restart() {
	s.tb.Helper()
	if err := s.proc.Restart(context.Background()); err != nil {
		s.tb.Fatalf("redistest: restart redis-server on %s: %v", s.Addr, err)
	}
}

// Pause freezes the server with SIGSTOP: connections stay open but nothing is answered.
func (s *Server) Pause() { s.must(s.proc.Pause()) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() { s.must(s.proc.Resume()) }

func (s *Server) must(err error) {
	s.tb.Helper()
	if err != nil {
		s.tb.Fatalf("redistest: %v", err)
	}
}

// running reports whether the server was not killed (a cluster skips its killed nodes).
func (s *Server) running() bool { return s.proc.Running() }

// Do runs one command on a short-lived connection, for test set-up that must not share the
// code under test's client.
func (s *Server) Do(ctx context.Context, args ...any) (any, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	return c.Do(ctx, args...).Result()
}

// FreePort asks the kernel for a free loopback TCP port below 55535, so that a cluster node's
// bus port (port+10000) is valid too.
func FreePort() (int, error) { return redisproc.FreePort() }
