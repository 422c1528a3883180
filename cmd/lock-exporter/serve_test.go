package main

import (
	"bytes"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// metricValue returns the value of the series line that starts with series (name and labels,
// exactly as exposed), and whether it is present.
func metricValue(body, series string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			return v, err == nil
		}
	}
	return 0, false
}

func wantMetric(t *testing.T, body, series string, want float64) {
	t.Helper()
	v, ok := metricValue(body, series)
	if !ok {
		t.Errorf("%s missing", series)
	} else if v != want {
		t.Errorf("%s = %v, want %v", series, v, want)
	}
}

// TestServe runs the exporter against a real Redis and checks the whole scrape: the metric
// table, promtool's verdict, the other endpoints, the scrape deadline with Redis paused, a
// killed Redis and the recovery after it.
func TestServe(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedLocks(t, c, map[string]seed{
		"jobs:1":         {ttl: time.Minute, idle: 300},
		"jobs:2":         {ttl: 5 * time.Second, idle: 200},
		"jobs:3":         {ttl: time.Minute, idle: 100},
		"jobs:perm":      {idle: 50},
		"jobs:\xff\xfe":  {ttl: time.Minute, idle: 10},
		"wf:run:1":       {ttl: 30 * time.Second, idle: 1},
		"unrelated:data": {idle: 9000},
	})
	config := testkit.WriteFile(t, "exporter.yml", `
namespaces:
  - name: jobs
    pattern: "jobs:*"
    expected_ttl: 60s
    expected_renew_interval: 20s
`)
	s := startServer(t, map[string]string{"LOCK_EXPORTER_SCAN_TOP_K": "2"},
		"--redis.addr", srv.Addr, "--config.file", config, "--namespace", "workflow=wf:run:*")

	code, body := s.get(t, "/metrics", 5*time.Second)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, m := range []struct {
		series string
		want   float64
	}{
		{`lock_exporter_up`, 1},
		{`lock_keys{lock_namespace="jobs"}`, 5},
		{`lock_keys_without_ttl{lock_namespace="jobs"}`, 1},
		{`lock_keys{lock_namespace="workflow"}`, 1},
		{`lock_keys_without_ttl{lock_namespace="workflow"}`, 0},
		{`lock_exporter_keys_truncated{lock_namespace="jobs"}`, 0},
		{`lock_exporter_scrape_complete{lock_namespace="jobs"}`, 1},
		{`lock_exporter_scrape_complete{lock_namespace="workflow"}`, 1},
		{`lock_exporter_idle_time_available`, 1},
		{`lock_expected_ttl_seconds{lock_namespace="jobs"}`, 60},
		{`lock_expected_renew_interval_seconds{lock_namespace="jobs"}`, 20},
	} {
		wantMetric(t, body, m.series, m.want)
	}
	if v, ok := metricValue(body, `lock_key_ttl_min_seconds{lock_namespace="jobs"}`); !ok || v <= 4 || v > 5 {
		t.Errorf("lock_key_ttl_min_seconds{jobs} = %v (present %v), want within (4,5]", v, ok)
	}
	// Idle times are seeded once and grow with the clock: a loaded machine may take a second or
	// two between the seeding and the scrape, so each is checked from its seed up.
	for series, seeded := range map[string]float64{
		`lock_key_idle_seconds{key="jobs:1",lock_namespace="jobs"}`: 300,
		`lock_key_idle_seconds{key="jobs:2",lock_namespace="jobs"}`: 200,
	} {
		if v, ok := metricValue(body, series); !ok || v < seeded || v > seeded+5 {
			t.Errorf("%s = %v (present %v), want %v to %v", series, v, ok, seeded, seeded+5)
		}
	}
	if v, ok := metricValue(body, `lock_key_idle_max_seconds{lock_namespace="jobs"}`); !ok || v < 300 || v > 305 {
		t.Errorf("lock_key_idle_max_seconds{jobs} = %v (present %v), want ~300", v, ok)
	}
	if n := strings.Count(body, `lock_key_idle_seconds{key=`); n != 3 { // top-2 of jobs, workflow's one
		t.Errorf("%d lock_key_idle_seconds series, want 3 (LOCK_EXPORTER_SCAN_TOP_K=2)", n)
	}
	// The contract's labels; prometheus/common/version's collector adds branch, goos, goarch, tags.
	buildInfo := regexp.MustCompile(`(?m)^lock_exporter_build_info\{(.*)\} 1$`).FindStringSubmatch(body)
	for _, label := range []string{`goversion="go[^"]+"`, `revision="[^"]+"`, `version="[^"]+"`} {
		if buildInfo == nil || !regexp.MustCompile(`(^|,)`+label+`(,|$)`).MatchString(buildInfo[1]) {
			t.Errorf("lock_exporter_build_info missing or without %s: %q", label, buildInfo)
		}
	}
	// promhttp.InstrumentMetricHandler counts the metrics path's own requests.
	for _, series := range []string{`promhttp_metric_handler_requests_total{code="200"}`, "promhttp_metric_handler_requests_in_flight"} {
		if _, ok := metricValue(body, series); !ok {
			t.Errorf("%s missing", series)
		}
	}
	if !regexp.MustCompile(`(?m)^lock_exporter_scrape_duration_seconds\{lock_namespace="jobs"\} `).MatchString(body) {
		t.Errorf("lock_exporter_scrape_duration_seconds missing")
	}
	if !strings.Contains(body, "\ngo_goroutines ") || !strings.Contains(body, "\nprocess_start_time_seconds ") {
		t.Errorf("Go and process metrics missing")
	}
	if strings.Contains(body, ownerToken) || strings.Contains(body, "unrelated") {
		t.Errorf("output leaks a lock value or a non-lock key")
	}
	promtoolCheck(t, body)

	if code, body := s.get(t, "/-/healthy", 0); code != http.StatusOK || body != "OK\n" {
		t.Errorf("GET /-/healthy: %d %q", code, body)
	}
	if code, body := s.get(t, "/", 0); code != http.StatusOK || !strings.Contains(body, `href="/metrics"`) {
		t.Errorf("GET /: %d, want a landing page linking to metrics", code)
	}
	if code, _ := s.get(t, "/nope", 0); code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", code)
	}

	t.Run("paused Redis answers by the scrape deadline", func(t *testing.T) {
		srv.Pause()
		defer srv.Resume()
		// Three concurrent scrapes with a 1.5s scrape timeout: each answers in about 1s (1.5s
		// less the 500ms offset), not one after the other.
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				start := time.Now()
				code, body := s.get(t, "/metrics", 1500*time.Millisecond)
				elapsed := time.Since(start)
				if code != http.StatusOK || elapsed > 1500*time.Millisecond {
					t.Errorf("scrape of a paused Redis: status %d after %v, want 200 within the 1.5s timeout", code, elapsed)
				}
				wantMetric(t, body, "lock_exporter_up", 0)
				wantMetric(t, body, `lock_exporter_scrape_complete{lock_namespace="jobs"}`, 0)
				if _, ok := metricValue(body, `lock_keys{lock_namespace="jobs"}`); ok {
					t.Errorf("lock_keys exported while Redis is unreadable")
				}
			})
		}
		wg.Wait()
	})

	t.Run("killed Redis answers at once and recovers", func(t *testing.T) {
		srv.Kill()
		start := time.Now()
		_, body := s.get(t, "/metrics", 10*time.Second)
		if elapsed := time.Since(start); elapsed > time.Second {
			t.Errorf("scrape of a dead Redis took %v, want well under a second", elapsed)
		}
		wantMetric(t, body, "lock_exporter_up", 0)
		srv.Restart() // same port, no data
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, body = s.get(t, "/metrics", 2*time.Second)
			if v, _ := metricValue(body, "lock_exporter_up"); v == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("exporter did not recover after Redis came back")
			}
			time.Sleep(100 * time.Millisecond)
		}
		wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 0)
	})

	if code := s.stop(); code != exitOK {
		t.Errorf("exit status after SIGTERM-like shutdown: %d", code)
	}
}

// TestServeBasicAuth protects /metrics with exporter-toolkit's web configuration.
func TestServeBasicAuth(t *testing.T) {
	srv := redistest.Start(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := testkit.WriteFile(t, "web.yml", "basic_auth_users:\n  prometheus: "+string(hash)+"\n")
	s := startServer(t, nil, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*", "--web.config.file", web)
	if code, _ := s.get(t, "/metrics", 0); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/metrics", nil)
	req.SetBasicAuth("prometheus", "scrape-secret")
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	client.CloseIdleConnections()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with credentials: %d, want 200", resp.StatusCode)
	}
}

func TestListenAddressTaken(t *testing.T) {
	srv := redistest.Start(t)
	s := startServer(t, nil, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	addr := strings.TrimPrefix(s.url, "http://")
	code, _, stderr := runCmd(t, nil, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*", "--web.listen-address", addr)
	if code != exitFailure || !strings.Contains(stderr, "--web.listen-address") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("second exporter on %s: status %d, stderr %q; want 1 and one line", addr, code, stderr)
	}
}

// promtoolCheck runs `promtool check metrics` (built from tools/go.mod) on an exposition.
func promtoolCheck(t *testing.T, exposition string) {
	t.Helper()
	root := testkit.RepoRoot(t)
	cmd := exec.Command(testkit.Tool(t, "promtool"), "check", "metrics")
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(exposition)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
