package lease

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// sharedAddr is a redis-server started once for the package. Example functions have no
// testing.TB to start their own, and sharing one server keeps the suite fast; tests that need
// to pause, kill or hook a server start their own with redistest.
var sharedAddr string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	stop, err := startSharedRedis()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak after the lease tests:", err)
			return 1
		}
	}
	return code
}

func startSharedRedis() (stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found in PATH: install it (Debian/Ubuntu: apt-get install -y redis-server redis-tools) or run bash .ci/run")
	}
	dir, err := os.MkdirTemp("", "lease-redis-")
	if err != nil {
		return nil, err
	}
	port, err := redisproc.FreePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port)}, redisproc.Args(dir)...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err = rdb.Ping(context.Background()).Err(); err == nil {
			sharedAddr = addr
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
