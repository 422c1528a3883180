package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/cmd/internal/testharness/clitest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestMain(m *testing.M) {
	testkit.VerifyTestMain(m)
}

// runCmd runs `lock-exporter args...` in-process with the environment variables vars, and
// returns its exit status and output.
func runCmd(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, vars, func(ctx context.Context, base cli.Env) int {
		return run(ctx, &env{Env: base}, args)
	})
}

// server is an exporter running in-process.
type server struct {
	url    string
	stderr *testkit.SyncBuffer
	stop   func() int
}

// startServer runs `lock-exporter args...` on a free loopback port until the test ends.
func startServer(t *testing.T, vars map[string]string, args ...string) *server {
	t.Helper()
	return startServerWith(t, nil, vars, args...)
}

// startServerWith is startServer with a change to the command's env (nil: none).
func startServerWith(t *testing.T, tweak func(*env), vars map[string]string, args ...string) *server {
	t.Helper()
	base, _, stderr := clitest.NewEnv(vars)
	e := &env{Env: base}
	if tweak != nil {
		tweak(e)
	}
	addrs := make(chan []string, 1)
	e.Listening = func(a []string) { addrs <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, e, append([]string{"--web.listen-address", "127.0.0.1:0"}, args...)) }()
	var s *server
	select {
	case a := <-addrs:
		var once sync.Once
		var code int
		s = &server{url: "http://" + a[0], stderr: stderr, stop: func() int {
			once.Do(func() {
				cancel()
				select {
				case code = <-done:
				case <-time.After(10 * time.Second):
					t.Errorf("server did not stop within 10s")
				}
			})
			return code
		}}
	case code := <-done:
		cancel()
		t.Fatalf("server exited with %d: %s", code, stderr.String())
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("server did not start: %s", stderr.String())
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// get fetches path, with Prometheus' scrape timeout header when timeout > 0.
func (s *server) get(t *testing.T, path string, timeout time.Duration) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if timeout > 0 {
		req.Header.Set(exporter.ScrapeTimeoutHeader, strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	client.CloseIdleConnections()
	return resp.StatusCode, string(body)
}

// seedLocks writes lock keys with given idle seconds (RESTORE ... IDLETIME), so idle times are
// exact without waiting.
func seedLocks(t *testing.T, c redis.UniversalClient, keys map[string]seed) {
	t.Helper()
	ctx := context.Background()
	const tmpl = "lockwatch-test:template"
	if err := c.Set(ctx, tmpl, ownerToken, 0).Err(); err != nil {
		t.Fatal(err)
	}
	dump, err := c.Dump(ctx, tmpl).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Del(ctx, tmpl).Err(); err != nil {
		t.Fatal(err)
	}
	for k, s := range keys {
		args := []any{"RESTORE", k, s.ttl.Milliseconds(), dump, "REPLACE"}
		if s.idle > 0 {
			args = append(args, "IDLETIME", s.idle)
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("restore %q: %v", k, err)
		}
	}
}

type seed struct {
	ttl  time.Duration
	idle int
}

// ownerToken is every seeded lock's value; no output may ever contain it.
const ownerToken = "owner-token-5f0c1d9e"
