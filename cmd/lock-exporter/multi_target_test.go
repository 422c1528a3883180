package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// Passwords of the two targets: no response and no log line may ever contain them.
const (
	livePassword = "live-pw-3d9e71"
	downPassword = "down-pw-8c02aa"
)

// scrapeURL is the path of target's scrape.
func scrapeURL(target string) string {
	return exporter.ScrapePath + "?" + url.Values{"target": {target}}.Encode()
}

// fetch is server.get for use from any goroutine: errors are returned, not fatal.
func (s *server) fetch(path string, timeout time.Duration) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set(exporter.ScrapeTimeoutHeader, strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestMultiTarget serves two real Redis deployments from one exporter: "live" answers, "down" was
// stopped. Each /scrape answers for its own target alone, the down one promptly with up 0, and
// /metrics keeps the exporter's own metrics without a Redis of its own.
func TestMultiTarget(t *testing.T) {
	live, liveClient := testkit.StartPasswordRedis(t, livePassword)
	down, _ := testkit.StartPasswordRedis(t, downPassword)
	seedLocks(t, liveClient, map[string]seed{
		"jobs:1":    {ttl: time.Minute, idle: 40},
		"jobs:2":    {ttl: time.Minute, idle: 20},
		"jobs:perm": {idle: 90},
	})
	down.Kill()
	config := testkit.MultiTargetConfig(t, "", [3]string{"live", live.Addr, livePassword}, [3]string{"down", down.Addr, downPassword})
	s := startServer(t, nil, "--config.file", config, "--log.level", "debug")
	var responses strings.Builder // everything the exporter answered, searched for passwords at the end

	code, body := s.get(t, scrapeURL("live"), 5*time.Second)
	responses.WriteString(body)
	if code != http.StatusOK {
		t.Fatalf("scrape live: %d %s", code, body)
	}
	wantMetric(t, body, "lock_exporter_up", 1)
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 3)
	wantMetric(t, body, `lock_keys_without_ttl{lock_namespace="jobs"}`, 1)
	// Idle time goes on counting in Redis while the test runs: 90s seeded, a few seconds of slack.
	if v, ok := metricValue(body, `lock_key_idle_seconds{key="jobs:perm",lock_namespace="jobs"}`); !ok || v < 90 || v > 95 {
		t.Errorf("lock_key_idle_seconds{jobs:perm} = %v (present %v), want 90 to 95", v, ok)
	}
	for _, own := range []string{"go_goroutines", "process_start_time_seconds", "lock_exporter_build_info"} {
		if strings.Contains(body, own) {
			t.Errorf("a target's scrape carries the exporter's own %s", own)
		}
	}
	promtoolCheck(t, body)

	start := time.Now()
	code, body = s.get(t, scrapeURL("down"), 10*time.Second)
	elapsed := time.Since(start)
	responses.WriteString(body)
	if code != http.StatusOK {
		t.Fatalf("scrape down: %d %s", code, body)
	}
	wantMetric(t, body, "lock_exporter_up", 0)
	if _, ok := metricValue(body, `lock_keys{lock_namespace="jobs"}`); ok {
		t.Errorf("lock_keys exported for a stopped Redis")
	}
	// A refused connection is known at once; the scrape deadline (9.5s) is not waited for.
	if elapsed > 3*time.Second {
		t.Errorf("scrape of a stopped Redis took %v, want a prompt answer", elapsed)
	}

	code, body = s.get(t, "/metrics", 5*time.Second)
	responses.WriteString(body)
	if code != http.StatusOK || !strings.Contains(body, "\ngo_goroutines ") || !strings.Contains(body, "lock_exporter_build_info{") {
		t.Errorf("/metrics: %d, want the exporter's own metrics", code)
	}
	if _, ok := metricValue(body, "lock_exporter_up"); ok {
		t.Errorf("/metrics scans a Redis although only targets are configured")
	}
	wantMetric(t, body, `lock_exporter_target_scrapes_total{outcome="served",target="live"}`, 1)
	wantMetric(t, body, `lock_exporter_target_scrapes_total{outcome="served",target="down"}`, 1)
	wantMetric(t, body, `lock_exporter_target_scrapes_total{outcome="busy",target="down"}`, 0)
	promtoolCheck(t, body)
	_, landing := s.get(t, "/", 0)
	if !strings.Contains(landing, `href="/scrape?target=live"`) {
		t.Errorf("the landing page does not link the targets")
	}

	t.Run("a paused target answers by its scrape deadline", func(t *testing.T) {
		paused, _ := testkit.StartPasswordRedis(t, livePassword)
		config := testkit.MultiTargetConfig(t, "", [3]string{"paused", paused.Addr, livePassword})
		ps := startServer(t, nil, "--config.file", config)
		paused.Pause()
		defer paused.Resume()
		start := time.Now()
		code, body := ps.get(t, scrapeURL("paused"), 1500*time.Millisecond)
		elapsed := time.Since(start)
		if code != http.StatusOK || elapsed > 1500*time.Millisecond {
			t.Errorf("scrape of a paused target: status %d after %v, want 200 within the 1.5s timeout", code, elapsed)
		}
		wantMetric(t, body, "lock_exporter_up", 0)
	})

	t.Run("concurrent scrapes of both targets", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		var mu sync.Mutex
		for i := range 20 {
			name, wantUp := "live", "1"
			if i%2 == 1 {
				name, wantUp = "down", "0"
			}
			wg.Go(func() {
				code, body, err := s.fetch(scrapeURL(name), 5*time.Second)
				mu.Lock()
				responses.WriteString(body)
				mu.Unlock()
				switch {
				case err != nil:
					errs <- err
				case code != http.StatusOK:
					errs <- fmt.Errorf("%s: status %d", name, code)
				case !strings.Contains(body, "\nlock_exporter_up "+wantUp+"\n"):
					errs <- fmt.Errorf("%s: want lock_exporter_up %s in\n%s", name, wantUp, body)
				case name == "live" && !strings.Contains(body, `lock_keys{lock_namespace="jobs"} 3`):
					errs <- fmt.Errorf("live: lock_keys missing")
				case name == "down" && strings.Contains(body, "lock_keys{"):
					errs <- fmt.Errorf("down: carries lock_keys (another target's result?)")
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	if code := s.stop(); code != exitOK {
		t.Errorf("exit status %d", code)
	}
	out := responses.String() + s.stderr.String()
	for _, pw := range []string{livePassword, downPassword} {
		if strings.Contains(out, pw) {
			t.Errorf("a response or log line contains a target's password")
		}
	}
	if !strings.Contains(s.stderr.String(), `target=down`) {
		t.Errorf("the down target's failed scan is not logged with its target name:\n%s", s.stderr.String())
	}
}

// TestScrapeRefusesWhatIsNotAConfiguredTarget: the target parameter only names configured
// targets. Anything else is a 400 with one line that quotes nothing of the request, and no
// connection is attempted — not even to an address the request names (no SSRF).
func TestScrapeRefusesWhatIsNotAConfiguredTarget(t *testing.T) {
	live, _ := testkit.StartPasswordRedis(t, livePassword)
	// A listener standing for an arbitrary host a request might name: it must see no connection.
	bait, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dialed atomic.Int32
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			conn, err := bait.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			conn.Close()
		}
	}()
	config := testkit.MultiTargetConfig(t, "", [3]string{"live", live.Addr, livePassword})
	s := startServer(t, nil, "--config.file", config)

	const secret = "pw-in-the-url-77f1"
	for _, path := range []string{
		scrapeURL("nope"),
		scrapeURL(bait.Addr().String()),
		scrapeURL("redis://u:" + secret + "@" + bait.Addr().String()),
		scrapeURL(live.Addr), // a configured target's address is not its name
		exporter.ScrapePath,
		exporter.ScrapePath + "?target=",
		exporter.ScrapePath + "?target=live&target=live",
		scrapeURL("live") + "&password=" + secret,
		scrapeURL("live") + "&addr=" + bait.Addr().String(),
	} {
		code, body := s.get(t, path, 2*time.Second)
		if code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, code)
		}
		if strings.Count(body, "\n") != 1 || strings.Contains(body, secret) || strings.Contains(body, bait.Addr().String()) ||
			strings.Contains(body, "nope") {
			t.Errorf("GET %s: body %q, want one line quoting nothing of the request", path, body)
		}
	}
	_, metrics := s.get(t, "/metrics", 0)
	wantMetric(t, metrics, "lock_exporter_target_requests_refused_total", 9)
	wantMetric(t, metrics, `lock_exporter_target_scrapes_total{outcome="served",target="live"}`, 0)
	bait.Close()
	<-accepted
	if n := dialed.Load(); n != 0 {
		t.Errorf("the exporter connected %d times to an address a request named", n)
	}
	if code, _ := s.get(t, scrapeURL("live"), 2*time.Second); code != http.StatusOK {
		t.Errorf("the configured target after the refusals: %d", code)
	}
	if strings.Contains(s.stderr.String(), secret) {
		t.Errorf("the log quotes a refused request's password")
	}
}

// TestMetricsKeepsItsRedisBesideTargets: a Redis given by flag is still scanned on /metrics when
// targets are configured too.
func TestMetricsKeepsItsRedisBesideTargets(t *testing.T) {
	own := redistest.Start(t)
	seedLocks(t, own.Client(t), map[string]seed{"jobs:own": {ttl: time.Minute}})
	config := testkit.MultiTargetConfig(t, "", [3]string{"other", testkit.UnusedAddr(t), downPassword})
	s := startServer(t, nil, "--config.file", config, "--redis.addr", own.Addr)
	_, body := s.get(t, "/metrics", 5*time.Second)
	wantMetric(t, body, "lock_exporter_up", 1)
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 1)
	_, body = s.get(t, scrapeURL("other"), 5*time.Second)
	wantMetric(t, body, "lock_exporter_up", 0)
	s.stop()
}

// TestTargetNamespaces serves two targets on one real Redis: "jobs" scans the file's namespaces,
// "orders" lists its own, and each scrape reports its target's namespaces alone.
func TestTargetNamespaces(t *testing.T) {
	srv, c := testkit.StartPasswordRedis(t, livePassword)
	seedLocks(t, c, map[string]seed{
		"jobs:1":         {ttl: time.Minute},
		"orders:lock:1":  {ttl: time.Minute},
		"orders:lock:2":  {idle: 30},
		"orders:cache:9": {ttl: time.Minute},
	})
	pw := testkit.WriteFile(t, "live.pw", livePassword+"\n")
	config := testkit.WriteFile(t, "exporter.yml", fmt.Sprintf(`namespaces:
  - {name: jobs, pattern: "jobs:*"}
targets:
  - {name: jobs, addr: %[1]s, password_file: %[2]s}
  - name: orders
    addr: %[1]s
    password_file: %[2]s
    namespaces:
      - {name: fulfilment, pattern: "orders:lock:*"}
`, srv.Addr, pw))
	s := startServer(t, nil, "--config.file", config)

	_, body := s.get(t, scrapeURL("jobs"), 5*time.Second)
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 1)
	if strings.Contains(body, `lock_namespace="fulfilment"`) {
		t.Errorf("the jobs target reports the orders target's namespace")
	}
	_, body = s.get(t, scrapeURL("orders"), 5*time.Second)
	wantMetric(t, body, "lock_exporter_up", 1)
	wantMetric(t, body, `lock_keys{lock_namespace="fulfilment"}`, 2)
	wantMetric(t, body, `lock_keys_without_ttl{lock_namespace="fulfilment"}`, 1)
	if strings.Contains(body, `lock_namespace="jobs"`) {
		t.Errorf("the orders target, which lists its own namespaces, reports the file's")
	}

	// inspect reads each target with its namespaces, and joins an ad hoc one to a target's own.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "orders"}, `namespace "fulfilment" (pattern "orders:lock:*"): 2 live keys`},
		{[]string{"--target", "jobs"}, `namespace "jobs" (pattern "jobs:*"): 1 live key`},
		{[]string{"--target", "orders", "--namespace", "cache=orders:cache:*"}, `namespace "cache" (pattern "orders:cache:*"): 1 live key`},
	} {
		code, stdout, stderr := runCmd(t, nil, append([]string{"inspect", "--config.file", config}, tc.args...)...)
		if first, _, _ := strings.Cut(stdout, "\n"); code != exitOK || !strings.HasPrefix(first, tc.want) {
			t.Errorf("inspect %v: status %d, first line %q (stderr %q); want 0 and %q", tc.args, code, first, stderr, tc.want)
		}
	}
	s.stop()
}

// TestTargetFlagsAndConfigErrors: bad target settings are one-line usage errors.
func TestTargetFlagsAndConfigErrors(t *testing.T) {
	config := testkit.MultiTargetConfig(t, "", [3]string{"a", "127.0.0.1:1", downPassword})
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--config.file", config, "--web.telemetry-path", "/scrape"}, `--web.telemetry-path "/scrape"`},
		{[]string{"--config.file", config, "--scan.max-concurrent-targets", "-2"}, "scan.max-concurrent-targets must be at least 1, got -2"},
		{[]string{"--config.file", testkit.WriteFile(t, "dup.yml",
			"namespaces: [{name: j, pattern: 'j:*'}]\ntargets: [{name: a, addr: 'a:1'}, {name: a, addr: 'b:1'}]\n")}, `duplicate target name "a"`},
		// Targets with namespaces of their own need none of the file's, unless a --redis.* flag
		// asks /metrics to scan the redis section's Redis as well.
		{[]string{"--config.file", testkit.WriteFile(t, "own.yml",
			"targets: [{name: a, addr: 'a:1', namespaces: [{name: j, pattern: 'j:*'}]}]\n"), "--redis.addr", "localhost:6379"},
			"no namespace configured for the redis section's Redis"},
	}
	for _, tt := range tests {
		code, _, stderr := runCmd(t, nil, append([]string{"--web.listen-address", "127.0.0.1:0"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want 2 and one line containing %q", tt.args, code, stderr, tt.want)
		}
	}
}
