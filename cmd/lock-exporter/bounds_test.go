package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// memoryLimit is the container limit deploy/kubernetes/lock-exporter.yaml sets.
const memoryLimit = 128 << 20

// uncappedEnv, when set, starts the exporter with caps too large to matter, so that a run shows
// what the attack costs without them (the test then logs and does not assert the limit).
const uncappedEnv = "LOCKWATCH_BOUNDS_UNCAPPED"

// TestBoundsKeepMemory runs the built exporter with its default caps against three attacks on
// its HTTP server and reads its peak RSS from /proc: thousands of idle keep-alive connections,
// thousands of connections that never send a request, and a thousand concurrent scrapes of a
// paused Redis. The peak stays under the manifests' 128Mi, /metrics answers after each attack,
// and lock_exporter_http_requests_refused_total counts what the caps turned away.
func TestBoundsKeepMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and opens thousands of connections")
	}
	raiseOpenFiles(t, 12000)
	uncapped := os.Getenv(uncappedEnv) != ""
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}})
	bin := testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")
	args := []string{"--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*", "--web.listen-address", "127.0.0.1:0"}
	if uncapped {
		args = append(args, "--web.max-connections", "1000000", "--web.max-requests", "1000000")
	}
	s, cmd, _ := runBinary(t, bin, args...)
	addr := strings.TrimPrefix(s.url, "http://")
	answers := func(what string) {
		t.Helper()
		testkit.Eventually(t, 20*time.Second, "/metrics to answer after "+what, func() bool {
			code, body, err := s.fetch("/metrics", 5*time.Second)
			return err == nil && code == http.StatusOK && strings.Contains(body, "lock_exporter_up 1")
		})
	}
	peak := func(what string) {
		t.Helper()
		hwm := peakRSS(t, cmd.Process.Pid)
		t.Logf("after %s: peak RSS %.1f MiB", what, float64(hwm)/(1<<20))
		if !uncapped && hwm >= memoryLimit {
			t.Errorf("after %s: peak RSS %d MiB, at or above the 128Mi limit", what, hwm>>20)
		}
	}
	answers("start")

	const crowd = 5000
	idle := openConns(t, addr, crowd, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n")
	peak(fmt.Sprintf("%d idle keep-alive connections", crowd))
	answers("idle keep-alive connections")
	closeAll(idle)

	silent := openConns(t, addr, crowd, "")
	peak(fmt.Sprintf("%d silent connections", crowd))
	answers("silent connections") // the header timeout closes them
	closeAll(silent)

	srv.Pause()
	var wg sync.WaitGroup
	for range 1000 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, s.url+"/metrics", nil)
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "3")
			client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	peak("1000 concurrent scrapes of a paused Redis")
	srv.Resume()
	answers("the paused Redis' scrapes")

	_, body := s.get(t, "/metrics", 5*time.Second)
	for _, reason := range []string{"max_connections", "max_requests"} {
		v, ok := metricValue(body, fmt.Sprintf(`lock_exporter_http_requests_refused_total{reason=%q}`, reason))
		t.Logf("refused %s: %v", reason, v)
		if !uncapped && (!ok || v == 0) {
			t.Errorf("lock_exporter_http_requests_refused_total{reason=%q} = %v, want some refused", reason, v)
		}
	}
}

// openConns dials n connections to addr, writes hello on each (nothing when empty) and reads the
// answer's status line, keeping the connections open. Dials the exporter refuses fail quietly.
func openConns(t *testing.T, addr string, n int, hello string) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			continue
		}
		conns = append(conns, c)
		if hello == "" {
			continue
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(hello)); err == nil {
			// Read the whole answer, so the connection is idle on the server's side.
			br := bufio.NewReader(c)
			if resp, err := http.ReadResponse(br, nil); err == nil {
				resp.Body.Close()
			}
		}
		_ = c.SetDeadline(time.Time{})
	}
	return conns
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// peakRSS is VmHWM of process pid, in bytes: the most resident memory it ever used.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// raiseOpenFiles lifts the test's soft limit on open files to at least n (within the hard
// limit), for the crowd of client connections; the exporter child inherits it.
func raiseOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("hard limit on open files %d is below %d", lim.Max, n)
	}
	old := lim.Cur
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lim.Cur = old
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
}
