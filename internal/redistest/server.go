// Package redistest starts real redis-server processes on free loopback ports for tests.
//
// Every server lives in its own temporary directory with persistence disabled, is bound to
// 127.0.0.1 only, and is killed when the test (or benchmark) that started it ends. The process is
// also tied to the test binary with a parent-death signal, so a crashed test run leaves no
// orphaned servers behind.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// installHint is the one line a developer sees when the machine lacks Redis.
const installHint = "redis-server not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-server redis-tools) or run bash .ci/run"

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 10 * time.Second

// Server is one real redis-server process.
type Server struct {
	// Addr is host:port of the server, always on 127.0.0.1.
	Addr string

	tb   testing.TB
	port int
	dir  string
	args []string

	// tlsOnly servers listen with TLS on port and have the plain port disabled.
	tlsOnly bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	log    *os.File
	waitCh chan error
}

// Option adjusts how a server is started.
type Option func(*Server)

// WithArgs appends redis-server command-line arguments, e.g. WithArgs("--requirepass", "x").
func WithArgs(args ...string) Option {
	return func(s *Server) { s.args = append(s.args, args...) }
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

// WithTLS serves TLS only (the plain port is disabled) with the given PEM files; clients must
// present a certificate signed by caFile unless auth-clients is turned off with WithArgs.
func WithTLS(certFile, keyFile, caFile string) Option {
	return func(s *Server) {
		s.tlsOnly = true
		s.args = append(s.args, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
			"--tls-ca-cert-file", caFile)
	}
}

// Start launches a redis-server on a free loopback port and stops it when tb ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	bin := Binary(tb)
	s := &Server{tb: tb, dir: tb.TempDir()}
	for _, o := range opts {
		o(s)
	}
	var lastErr error
	// A port picked free can be taken by someone else before redis binds it; try a few.
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			tb.Fatalf("redistest: pick port: %v", err)
		}
		s.port = port
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.launch(bin); lastErr == nil {
			tb.Cleanup(s.Kill)
			return s
		}
	}
	tb.Fatalf("redistest: start redis-server: %v", lastErr)
	return nil
}

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory (its log is redis.log there).
func (s *Server) Dir() string { return s.dir }

func (s *Server) launch(bin string) error {
	portArgs := []string{"--port", strconv.Itoa(s.port)}
	if s.tlsOnly {
		portArgs = []string{"--port", "0", "--tls-port", strconv.Itoa(s.port)}
	}
	args := append(portArgs, redisproc.Args(s.dir)...)
	args = append(args, s.args...)
	logFile, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			logFile.Close()
			return fmt.Errorf("redis-server exited early (%v): %s", err, s.tailLog())
		default:
		}
		if s.ready() == nil {
			s.mu.Lock()
			s.cmd, s.log, s.waitCh = cmd, logFile, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	logFile.Close()
	return fmt.Errorf("redis-server on %s did not answer PING within %s: %s", s.Addr, startTimeout, s.tailLog())
}

// ready speaks RESP directly so that readiness does not depend on client configuration
// (ACLs, passwords): any reply, even NOAUTH, proves the server is accepting commands. A TLS-only
// server is ready once it accepts TCP connections.
func (s *Server) ready() error {
	conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.tlsOnly {
		return nil
	}
	_ = conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "-LOADING") {
		return errors.New("loading")
	}
	return nil
}

func (s *Server) tailLog() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	text := strings.TrimSpace(string(b))
	if len(text) > 500 {
		text = text[len(text)-500:]
	}
	return text
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Kill stops the server with SIGKILL (data is lost: persistence is off). Safe to call twice.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, logFile, wait := s.cmd, s.log, s.waitCh
	s.cmd, s.log = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// A paused process must be resumed to die promptly and release its port.
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-wait
	logFile.Close()
}

// Restart kills the server and starts a fresh one on the same port, with an empty dataset.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	var err error
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		// The old socket may linger briefly; retry until the port can be bound again.
		if err = s.launch(Binary(s.tb)); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.tb.Fatalf("redistest: restart redis-server on %s: %v", s.Addr, err)
}

// Pause freezes the server with SIGSTOP: connections stay open but nothing is answered.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.tb.Fatalf("redistest: signal %v: server %s is not running", sig, s.Addr)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("redistest: signal %v to %s: %v", sig, s.Addr, err)
	}
}

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
