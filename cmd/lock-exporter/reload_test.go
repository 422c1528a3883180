package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// post sends an empty POST to path and returns the status and body.
func (s *server) post(t *testing.T, path string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post(s.url+path, "text/plain", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// configFile is a configuration file the test rewrites under a running exporter.
type configFile string

func newConfigFile(t *testing.T, body string) configFile {
	c := configFile(filepath.Join(t.TempDir(), "exporter.yml"))
	c.write(t, body)
	return c
}

func (c configFile) write(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(string(c), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

const (
	jobsOnly       = "namespaces:\n  - {name: jobs, pattern: 'jobs:*'}\n"
	jobsAndOrders  = jobsOnly + "  - {name: orders, pattern: 'orders:*'}\n"
	unloadableFile = "namespaces:\n  - {name: jobs, patern: 'jobs:*'}\n"
)

// TestReload rewrites the configuration file under a running exporter. A POST to /-/reload, or a
// reload request (SIGHUP in the real process), serves the new namespaces and targets; a file
// that does not load keeps the previous configuration served and says so; the targets'
// counters outlive reloads, and a removed target's series go with it.
func TestReload(t *testing.T) {
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{
		"jobs:1":   {ttl: time.Minute},
		"orders:1": {ttl: time.Minute},
		"orders:2": {idle: 5},
	})
	config := newConfigFile(t, jobsOnly)
	reloads := make(chan struct{})
	s := startServerWith(t, func(e *env) { e.reloads = reloads }, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr,
		"LOCK_EXPORTER_WEB_ENABLE_LIFECYCLE": "true"},
		"--config.file", string(config))
	metrics := func() string {
		t.Helper()
		_, body := s.get(t, "/metrics", 5*time.Second)
		return body
	}

	body := metrics()
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 1)
	wantMetric(t, body, "lock_exporter_config_last_reload_successful", 1)
	if strings.Contains(body, `lock_namespace="orders"`) || strings.Contains(body, "lock_exporter_target_scrapes_total") {
		t.Fatalf("before any reload: orders or target series served")
	}

	// A namespace and a target added, by POST.
	config.write(t, jobsAndOrders+fmt.Sprintf("targets:\n  - {name: same, addr: %s}\n", srv.Addr))
	if code, answer := s.post(t, exporter.ReloadPath); code != http.StatusOK || answer != "configuration reloaded\n" {
		t.Fatalf("POST %s = %d %q, want 200", exporter.ReloadPath, code, answer)
	}
	body = metrics()
	wantMetric(t, body, `lock_keys{lock_namespace="orders"}`, 2)
	wantMetric(t, body, `lock_exporter_target_scrapes_total{outcome="served",target="same"}`, 0)
	if code, body := s.get(t, scrapeURL("same"), 5*time.Second); code != http.StatusOK || !strings.Contains(body, `lock_keys{lock_namespace="orders"} 2`) {
		t.Fatalf("scrape of the added target: %d %q", code, body)
	}

	// A file that does not load: the previous configuration stays served.
	config.write(t, unloadableFile)
	code, answer := s.post(t, exporter.ReloadPath)
	if code != http.StatusInternalServerError || strings.Count(answer, "\n") != 1 || !strings.Contains(answer, `line 2: unknown field "patern"`) {
		t.Errorf("POST %s with a bad file = %d %q, want 500 and one line naming the field", exporter.ReloadPath, code, answer)
	}
	body = metrics()
	wantMetric(t, body, "lock_exporter_config_last_reload_successful", 0)
	wantMetric(t, body, `lock_keys{lock_namespace="orders"}`, 2)
	wantMetric(t, body, `lock_exporter_target_scrapes_total{outcome="served",target="same"}`, 1)

	// The target and the namespace removed, by a reload request.
	config.write(t, jobsOnly)
	reloads <- struct{}{}
	testkit.Eventually(t, 10*time.Second, "the reload request to be served", func() bool {
		v, _ := metricValue(metrics(), "lock_exporter_config_last_reload_successful")
		return v == 1
	})
	body = metrics()
	for _, gone := range []string{`lock_namespace="orders"`, `target="same"`} {
		if strings.Contains(body, gone) {
			t.Errorf("after removing it, /metrics still serves %s", gone)
		}
	}
	if code, _ := s.get(t, scrapeURL("same"), 5*time.Second); code != http.StatusNotFound {
		t.Errorf("scrape of a removed target: %d, want 404 (no targets configured)", code)
	}

	if code, _ := s.get(t, exporter.ReloadPath, 0); code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s = %d, want 405", exporter.ReloadPath, code)
	}
	s.stop()
	logs := s.stderr.String()
	for _, want := range []string{`msg="configuration reloaded" namespaces=2`, `msg="configuration reload failed; serving the previous configuration"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

// TestReloadNeedsLifecycleFlag: without --web.enable-lifecycle, POST /-/reload is refused with
// 403 and reloads nothing (anyone who reaches the port could otherwise make the exporter rebuild
// its clients); SIGHUP still reloads.
func TestReloadNeedsLifecycleFlag(t *testing.T) {
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "orders:1": {ttl: time.Minute}})
	config := newConfigFile(t, jobsOnly)
	reloads := make(chan struct{})
	s := startServerWith(t, func(e *env) { e.reloads = reloads }, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr},
		"--config.file", string(config))
	config.write(t, jobsAndOrders)
	if code, answer := s.post(t, exporter.ReloadPath); code != http.StatusForbidden || !strings.Contains(answer, "--web.enable-lifecycle") {
		t.Errorf("POST %s without --web.enable-lifecycle = %d %q, want 403 naming the flag", exporter.ReloadPath, code, answer)
	}
	if _, body := s.get(t, "/metrics", 5*time.Second); strings.Contains(body, `lock_namespace="orders"`) {
		t.Fatal("a refused POST reloaded the configuration")
	}
	reloads <- struct{}{}
	testkit.Eventually(t, 10*time.Second, "SIGHUP's reload to serve orders", func() bool {
		_, body := s.get(t, "/metrics", 5*time.Second)
		return strings.Contains(body, `lock_keys{lock_namespace="orders"} 1`)
	})
}

// TestReloadLetsScrapesInFlightFinish: a scrape that started before a reload is answered by the
// scanner it started on, which is closed only after it; scrapes after the reload see the new
// configuration.
func TestReloadLetsScrapesInFlightFinish(t *testing.T) {
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "orders:1": {ttl: time.Minute}})
	config := newConfigFile(t, jobsOnly)
	s := startServer(t, map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}, "--config.file", string(config),
		"--web.enable-lifecycle")
	s.get(t, "/metrics", 5*time.Second) // the pool holds a connection

	srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	type answer struct {
		code int
		body string
		err  error
	}
	inFlight := make(chan answer, 1)
	go func() {
		code, body, err := s.fetch("/metrics", 60*time.Second)
		inFlight <- answer{code, body, err}
	}()
	// The scrape has started once its handler waits on the paused Redis.
	testkit.Eventually(t, 10*time.Second, "the scrape to be in flight", func() bool {
		buf := make([]byte, 1<<20)
		return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "(*metricsHandler).ServeHTTP")
	})

	config.write(t, jobsAndOrders)
	if code, answer := s.post(t, exporter.ReloadPath); code != http.StatusOK {
		t.Fatalf("reload with a scrape in flight: %d %q", code, answer)
	}
	srv.Resume()
	resumed = true
	a := <-inFlight
	if a.err != nil || a.code != http.StatusOK {
		t.Fatalf("scrape in flight across the reload: %d, %v", a.code, a.err)
	}
	wantMetric(t, a.body, "lock_exporter_up", 1) // its scanner was not closed under it
	wantMetric(t, a.body, `lock_keys{lock_namespace="jobs"}`, 1)
	if strings.Contains(a.body, `lock_namespace="orders"`) {
		t.Errorf("the scrape that started before the reload reports the new namespace")
	}
	_, body := s.get(t, "/metrics", 5*time.Second)
	wantMetric(t, body, `lock_keys{lock_namespace="orders"}`, 1)
}

// TestSIGHUPReloads sends a real SIGHUP to the built exporter, as a ConfigMap reloader or
// `kill -HUP` would.
func TestSIGHUPReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "orders:1": {ttl: time.Minute}})
	config := newConfigFile(t, jobsOnly)
	bin := testkit.BuildBinary(t, t.TempDir(), "./cmd/lock-exporter")
	s, cmd, logs := runBinary(t, bin, "--config.file", string(config), "--redis.addr", srv.Addr, "--web.listen-address", "127.0.0.1:0")

	config.write(t, jobsAndOrders)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "SIGHUP to reload the configuration", func() bool {
		return strings.Contains(logs.String(), `msg="configuration reloaded"`)
	})
	_, body := s.get(t, "/metrics", 5*time.Second)
	wantMetric(t, body, `lock_keys{lock_namespace="orders"}`, 1)
	wantMetric(t, body, "lock_exporter_config_last_reload_successful", 1)
}
