// Package redisproc starts and supervises lockwatch's own throw-away redis-server processes,
// data servers and Sentinels watching one of them: the tests' (internal/testharness/redistest, the lease
// package's shared server), the demo's (cmd/internal/demo) and the benchmark's (bench/cmd/lockbench).
// It owns how such a server is configured, how its port is picked, how readiness is judged and
// how the process is stopped; the testing.TB and context flavours are thin wrappers around
// Process.
package redisproc

import (
	"errors"
	"net"
)

// Args are the redis-server arguments of a throw-away server, to follow the port arguments:
// loopback only, working directory dir, no persistence (a restart starts empty), in the
// foreground so the starter owns the process, and a quiet log.
func Args(dir string) []string {
	return []string{
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--loglevel", "warning",
	}
}

// maxPort keeps a cluster node's bus port (port+10000) valid too.
const maxPort = 65535 - 10000

// FreePort asks the kernel for a free loopback TCP port below 55535. Another process may take
// it before the server binds it, so Start retries with a new port when the server fails.
func FreePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port < maxPort {
			return port, nil
		}
	}
	return 0, errors.New("no free port below 55535")
}
