package redisproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrNoBinary is returned by Start when redis-server is not on PATH.
var ErrNoBinary = errors.New("redis-server not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-server redis-tools)")

// ErrNotRunning is returned by Pause and Resume after Kill.
var ErrNotRunning = errors.New("redis-server is not running")

// startAttempts is how many ports Start tries: a port picked free can be taken by another
// process before redis-server binds it.
const startAttempts = 5

// Config says how to start a server. The zero value is a plain server in a temporary directory.
type Config struct {
	// Dir is the server's working directory, where its log redis.log is kept. Empty: a new
	// temporary directory, removed by Stop.
	Dir string
	// Args are appended to the port arguments and Args(dir), e.g. "--requirepass", "x".
	Args []string
	// TLSOnly serves TLS on the port and disables the plain port; Args must name the TLS files.
	TLSOnly bool
	// Sentinel, when set, starts a Redis Sentinel watching that master instead of a data
	// server. Its configuration file is sentinel.conf in Dir, rewritten at every (re)start.
	Sentinel *Monitor
}

// Process is one redis-server started by Start. Its methods are safe for concurrent use.
type Process struct {
	cfg     Config
	bin     string
	port    int
	tempDir bool // Dir was created by Start and is removed by Stop

	mu     sync.Mutex
	cmd    *exec.Cmd
	log    *os.File
	exited chan error
}

// Start launches redis-server from PATH on a free 127.0.0.1 port and waits until it answers,
// trying another port when the server fails to come up. It gives up early when ctx ends.
func Start(ctx context.Context, cfg Config) (*Process, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoBinary
	}
	if cfg.Sentinel != nil {
		if err := cfg.Sentinel.validate(); err != nil {
			return nil, err
		}
	}
	p := &Process{cfg: cfg, bin: bin}
	if p.cfg.Dir == "" {
		if p.cfg.Dir, err = os.MkdirTemp("", "redis-server-"); err != nil {
			return nil, err
		}
		p.tempDir = true
	}
	if err := p.startOnFreePort(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Process) startOnFreePort(ctx context.Context) error {
	var err error
	for range startAttempts {
		if p.port, err = FreePort(); err != nil {
			return fmt.Errorf("pick a port for redis-server: %w", err)
		}
		if err = p.launch(ctx); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// Addr is the server's host:port, always on 127.0.0.1.
func (p *Process) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Port is the TCP port the server listens on.
func (p *Process) Port() int { return p.port }

// Dir is the server's working directory; its log is redis.log there.
func (p *Process) Dir() string { return p.cfg.Dir }

// Running reports whether the process was started and not killed since.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// launch starts the process on p.port and waits until it is ready; on failure nothing is left
// running.
func (p *Process) launch(ctx context.Context) error {
	logFile, err := os.OpenFile(filepath.Join(p.cfg.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	args, err := p.args()
	if err != nil {
		logFile.Close()
		return err
	}
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = p.cfg.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// The server must not outlive its starter, even one that is killed. In a process group of
	// its own it is spared the terminal's Ctrl-C, which is the starter's to handle: the demo
	// removes its keys from the server before it stops it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan error, 1)
	go reap(cmd, exited)
	if err := p.waitReady(ctx, exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		logFile.Close()
		return err
	}
	p.mu.Lock()
	p.cmd, p.log, p.exited = cmd, logFile, exited
	p.mu.Unlock()
	return nil
}

// ReaperFunction names the goroutine that waits for each started server until it exits, for
// goleak.IgnoreAnyFunction in leak checks that run while a test's servers still live.
const ReaperFunction = "github.com/lockwatch/lockwatch/internal/redisproc.reap"

// reap waits for the server process to exit and hands its status on.
func reap(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }

// args is the command line: a Sentinel's configuration file first, then the port arguments,
// Args(dir) and the caller's.
func (p *Process) args() ([]string, error) {
	var args []string
	if p.cfg.Sentinel != nil {
		lead, err := p.writeSentinelConf()
		if err != nil {
			return nil, err
		}
		args = lead
	}
	port := strconv.Itoa(p.port)
	if p.cfg.TLSOnly {
		args = append(args, "--port", "0", "--tls-port", port)
	} else {
		args = append(args, "--port", port)
	}
	args = append(args, Args(p.cfg.Dir)...)
	return append(args, p.cfg.Args...), nil
}

// Kill stops the server with SIGKILL (its data is lost: persistence is off) and keeps its
// directory, so Restart can start it again. Safe to call more than once.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, logFile, exited := p.cmd, p.log, p.exited
	p.cmd, p.log = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	// A paused process must be resumed to die promptly and release its port.
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-exited
	logFile.Close()
}

// Stop kills the server and removes the directory Start created for it. Safe to call more
// than once.
func (p *Process) Stop() {
	p.Kill()
	if p.tempDir {
		_ = os.RemoveAll(p.cfg.Dir)
	}
}

// Restart kills the server and starts a fresh one on the same port, with an empty dataset.
// The old socket may linger briefly, so it retries until the ready timeout.
func (p *Process) Restart(ctx context.Context) error {
	p.Kill()
	deadline := time.Now().Add(readyTimeout)
	for {
		err := p.launch(ctx)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pause freezes the server with SIGSTOP: connections stay open but nothing is answered.
func (p *Process) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (p *Process) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("signal %v to %s: %w", sig, p.Addr(), ErrNotRunning)
	}
	return p.cmd.Process.Signal(sig)
}
