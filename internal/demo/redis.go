package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// ErrNoRedisServer is returned by StartRedis when redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redis-server not found on PATH: install it (Debian: apt-get install redis-server) or pass --redis.addr")

// redisStartTimeout bounds how long a fresh redis-server may take to answer PING.
const redisStartTimeout = 10 * time.Second

// Redis is a redis-server process the demo started for itself: loopback only, no persistence,
// in a temporary directory that Stop removes.
type Redis struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan error
}

// StartRedis starts redis-server from PATH on a free 127.0.0.1 port and waits until it answers.
func StartRedis(ctx context.Context) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedisServer
	}
	var lastErr error
	// A free port can be taken between probing and binding; a second port is then tried.
	for range 3 {
		r, err := startRedis(ctx, bin)
		if err == nil {
			return r, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startRedis(ctx context.Context, bin string) (*Redis, error) {
	port, err := redisproc.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lockwatch-demo-redis-")
	if err != nil {
		return nil, err
	}
	r := &Redis{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, exited: make(chan error, 1)}
	logFile, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logFile.Close()
	r.cmd = exec.Command(bin, append([]string{"--port", strconv.Itoa(port)}, redisproc.Args(dir)...)...)
	r.cmd.Dir = dir
	r.cmd.Stdout = logFile
	r.cmd.Stderr = logFile
	// The server must not outlive the demo, even when the demo is killed.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	go func() { r.exited <- r.cmd.Wait() }()

	rdb := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	deadline := time.Now().Add(redisStartTimeout)
	for {
		if rdb.Ping(ctx).Err() == nil {
			return r, nil
		}
		select {
		case err := <-r.exited:
			r.exited <- err
			log := r.tailLog()
			r.Stop()
			return nil, fmt.Errorf("redis-server exited at start (%v): %s", err, log)
		case <-ctx.Done():
			r.Stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("redis-server on %s did not answer within %s", r.addr, redisStartTimeout)
		}
	}
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return r.addr }

// Stop kills the server and removes its directory. It is safe to call more than once.
func (r *Redis) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		err := <-r.exited
		r.exited <- err
	}
	os.RemoveAll(r.dir)
}

func (r *Redis) tailLog() string {
	data, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return lines[len(lines)-1]
}
