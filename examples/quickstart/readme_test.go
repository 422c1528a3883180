package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestREADMEShowsThisProgram: the README's library example is this file from `package main` on,
// byte for byte, so the example a newcomer copies is the one that compiles and runs here.
func TestREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, program, ok := strings.Cut(string(src), "\npackage main\n")
	if !ok {
		t.Fatal("main.go has no package clause")
	}
	block := "```go\npackage main\n" + program + "```\n"
	if !strings.Contains(string(readme), block) {
		t.Error("README.md does not show examples/quickstart/main.go (from `package main` on) in a ```go block; copy it again")
	}
}

// TestRunAgainstRedis runs the example against a real redis-server: it takes the lock, runs the
// job and releases, and a second run while the lock is held elsewhere skips the job.
func TestRunAgainstRedis(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := fmt.Sprintf("127.0.0.1:%d", srv.Port())
	if err := run(ctx, addr, "127.0.0.1:0", time.Millisecond); err != nil {
		t.Fatalf("run: %v", err)
	}
	rdb := srv.Client(t)
	if n, err := rdb.Exists(ctx, "scheduler:job:42").Result(); err != nil || n != 0 {
		t.Errorf("lock key left behind after the job: exists=%d err=%v", n, err)
	}
	// Another worker holds the lock: the example waits its acquire timeout, then skips.
	if err := rdb.Set(ctx, "scheduler:job:42", "another-worker", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, addr, "127.0.0.1:0", time.Millisecond); err != nil {
		t.Fatalf("run while the lock is held elsewhere: %v", err)
	}
	if v, err := rdb.Get(ctx, "scheduler:job:42").Result(); err != nil || v != "another-worker" {
		t.Errorf("the other worker's lock was touched: %q, %v", v, err)
	}
}

// TestServesMetricsUntilInterrupted checks that the example keeps serving the lock metrics after
// its job, until its context ends (Ctrl-C): a quickstart that exits leaves nothing to scrape.
func TestServesMetricsUntilInterrupted(t *testing.T) {
	srv := redistest.Start(t)
	listen := testkit.UnusedAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port()), listen, 0) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run after Ctrl-C: %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	}()
	// The release counter appears once the job is over; the metrics must still be served 2s on.
	released := `lock_releases_total{lock_namespace="scheduler",outcome="ok"} 1`
	testkit.Eventually(t, 10*time.Second, "the job's release on /metrics", func() bool {
		return strings.Contains(scrape(listen), released)
	})
	select {
	case err := <-done:
		t.Fatalf("run returned %v right after the job; want it to serve until interrupted", err)
	case <-time.After(2 * time.Second):
	}
	if !strings.Contains(scrape(listen), released) {
		t.Errorf("/metrics no longer served 2s after the job")
	}
}

func scrape(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
