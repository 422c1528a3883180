// Package pgtest starts real PostgreSQL servers for tests, the way internal/testharness/redistest starts
// redis-server: each in its own temporary directory, listening on a free loopback port and on a
// unix socket inside that directory, and stopped when the test that started it ends.
//
// PostgreSQL refuses to run as root. When the tests run as root (containers, CI), the server
// and initdb run as the unprivileged user "nobody", which then owns the temporary directory; that
// directory is created under os.TempDir() ($TMPDIR, else /tmp), which nobody must be able to
// traverse.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	// The pgx driver registers itself as "pgx" for database/sql.
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// installHint is the one line a developer sees when the machine lacks PostgreSQL.
const installHint = "PostgreSQL server binaries (initdb, postgres) not found: install them (Debian/Ubuntu: apt-get install -y postgresql) or run bash .ci/run"

// Timeouts of the server's life cycle; generous, since CI machines are loaded.
const (
	startTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
)

// unprivilegedUser runs the server when the tests run as root.
const unprivilegedUser = "nobody"

// Server is one real PostgreSQL server process.
type Server struct {
	// Addr is host:port of the server, always on 127.0.0.1.
	Addr string
	// DSN connects as the superuser "postgres" to the database "postgres" over TCP, without a
	// password (trust authentication on a loopback-only server).
	DSN string

	tb   testing.TB
	dir  string
	cred *syscall.Credential // nil: run as the current user

	mu     sync.Mutex
	cmd    *exec.Cmd
	waitCh chan error
}

// BinDir returns the directory of initdb and postgres: `pg_config --bindir` when pg_config is
// on PATH, else the newest /usr/lib/postgresql/*/bin (Debian's layout, which keeps the server
// binaries off PATH). It fails the test with an install hint when neither has them.
func BinDir(tb testing.TB) string {
	tb.Helper()
	var candidates []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return versionOf(debian[i]) > versionOf(debian[j]) })
	candidates = append(candidates, debian...)
	for _, dir := range candidates {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir
		}
	}
	tb.Fatal(installHint)
	return ""
}

// versionOf is the major version in /usr/lib/postgresql/<version>/bin, 0 if not a number.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Start initialises a fresh cluster in a temporary directory, starts PostgreSQL on a free
// loopback port and stops it (removing the directory) when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := BinDir(tb)
	s := &Server{tb: tb}
	s.cred = serverCredential(tb)
	s.dir = s.makeDir()
	tb.Cleanup(func() { _ = os.RemoveAll(s.dir) })
	if out, err := s.command(filepath.Join(bin, "initdb"), "-D", s.dataDir(), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		tb.Fatalf("pgtest: initdb: %v: %s", err, lastLines(string(out)))
	}
	var lastErr error
	// A port picked free can be taken before the server binds it; try a few.
	for range 5 {
		port, err := redisproc.FreePort()
		if err != nil {
			tb.Fatalf("pgtest: pick port: %v", err)
		}
		if lastErr = s.launch(bin, port); lastErr == nil {
			tb.Cleanup(s.Stop)
			return s
		}
	}
	tb.Fatalf("pgtest: start postgres: %v", lastErr)
	return nil
}

// serverCredential is nil unless the test runs as root, then the unprivileged user's.
func serverCredential(tb testing.TB) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(unprivilegedUser)
	if err != nil {
		tb.Fatalf("pgtest: running as root, and PostgreSQL refuses root: need the user %q to run it as: %v", unprivilegedUser, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
}

// makeDir creates the server's directory outside tb.TempDir, whose parents are private to the
// test's user, and hands it to the server's user.
func (s *Server) makeDir() string {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		s.tb.Fatalf("pgtest: %v", err)
	}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			_ = os.RemoveAll(dir)
			s.tb.Fatalf("pgtest: hand %s to %s: %v", dir, unprivilegedUser, err)
		}
	}
	return dir
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// command runs a PostgreSQL binary as the server's user, in the server's directory, and kills
// it if the test binary dies.
func (s *Server) command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	return cmd
}

func (s *Server) launch(bin string, port int) error {
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.DSN = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", s.Addr)
	logFile, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := s.command(filepath.Join(bin, "postgres"), "-D", s.dataDir(), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.dir,
		// A throw-away server: durability buys nothing and costs the tests time.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := s.waitReady(exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return err
	}
	s.mu.Lock()
	s.cmd, s.waitCh = cmd, exited
	s.mu.Unlock()
	return nil
}

// waitReady polls with real connections until the server answers a query.
func (s *Server) waitReady(exited <-chan error) error {
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("postgres exited early (%v): %s", err, s.tailLog())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("postgres on %s did not accept connections within %s (%v): %s", s.Addr, startTimeout, err, s.tailLog())
}

// DB returns a database/sql handle on the server (pgx driver), closed when the test ends.
func (s *Server) DB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		tb.Fatalf("pgtest: open %s: %v", s.Addr, err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// Stop shuts the server down (fast shutdown: open sessions are ended), falling back to
// SIGKILL after stopTimeout. Safe to call twice.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, wait := s.cmd, s.waitCh
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-wait:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-wait
	}
}

// Running reports whether the server process is alive (started and not stopped).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

func (s *Server) tailLog() string {
	b, _ := os.ReadFile(s.logPath())
	return lastLines(string(b))
}

// lastLines keeps the end of a log, where the reason a start failed is.
func lastLines(text string) string {
	text = strings.TrimSpace(text)
	if len(text) > 600 {
		text = text[len(text)-600:]
	}
	return text
}
