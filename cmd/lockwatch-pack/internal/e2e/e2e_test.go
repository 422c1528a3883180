package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/demo"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// envVar turns the test on; `make e2e` sets it.
const envVar = "LOCKWATCH_E2E"

// startE2E skips t unless the end-to-end tests are turned on (needs names what they need) and
// returns when the test started, the repository root, a scratch directory and the prometheus
// binary.
func startE2E(t *testing.T, needs string) (start time.Time, root, work, prometheusBin string) {
	t.Helper()
	if os.Getenv(envVar) == "" {
		t.Skipf("end-to-end test: set %s=1 or run `make e2e` (needs %s)", envVar, needs)
	}
	// Registered first, so it runs after every other cleanup: polling connections go last.
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	return time.Now(), testkit.RepoRoot(t), t.TempDir(), testkit.Tool(t, "prometheus")
}

const alertmanagerBin = "/usr/bin/prometheus-alertmanager"

// packOverrides shorten the windows and for: durations of the alerts the incident drives, so
// the run takes minutes rather than hours. They go through packconfig and the same generator as
// the committed rules, so every expression keeps the generated logic.
const packOverrides = `
alerts:
  abandonments:
    long: 3m
    short: 45s
    min_count: 3
    for: 1m
  key_without_ttl:
    for: 20s
  exporter_redis_down:
    for: 20s
`

// Prometheus evaluates and scrapes every interval; Alertmanager groups for as long.
const interval = 2 * time.Second

// TestIncident drives an incident through the whole chain and waits for each matching alert to
// reach the webhook through Alertmanager, then to resolve after recovery:
//
//  1. the demo workload with its faults on: leases keep being abandoned (LockAbandonmentsSustained)
//     and a lock without expiry exists (LockKeyWithoutTTL);
//  2. faults off, the no-TTL lock deleted: both resolve;
//  3. Redis stopped: LockExporterRedisDown; Redis back: it resolves.
func TestIncident(t *testing.T) {
	start, root, work, prometheusBin := startE2E(t, "redis-server and "+alertmanagerBin)
	if _, err := os.Stat(alertmanagerBin); err != nil {
		t.Fatalf("Alertmanager binary missing (%v): apt-get install prometheus-alertmanager", err)
	}
	exporterBin := testkit.BuildBinary(t, work, "./cmd/lock-exporter")

	// Redis and the workload: the library's metrics served as an application would.
	srv := redistest.Start(t)
	// The library's renew warnings would bury the test's own log; the alerts are what is checked.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := demo.New(demo.Options{Addr: srv.Addr, Logger: quiet, TurbulencePeriod: 12 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("workload: %v", err)
		}
	}()
	appListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := &http.Server{Handler: promhttp.HandlerFor(w.Registry(), promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = app.Serve(appListener) }()
	defer app.Close()

	// lock-exporter watching the demo's namespaces.
	exporterCfg, err := demo.ExporterConfig(srv.Addr, w.Namespaces())
	if err != nil {
		t.Fatal(err)
	}
	// A namespace only the exporter sees, as a cron script's lock taken without any lockwatch
	// library: the dashboards must still offer it (checkNamespaceOptions).
	exporterCfg.Namespaces = append(exporterCfg.Namespaces, exporterconfig.Namespace{Name: legacyNamespace, Pattern: "legacy-cron:lock:*"})
	if err := srv.Client(t).Set(context.Background(), "legacy-cron:lock:nightly", "cron@host-1", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	exporterCfgFile := writeFile(t, work, "exporter.yml", marshal(t, exporterCfg))
	exporterAddr := testkit.UnusedAddr(t)
	exporter := startProcess(t, "lock-exporter", exporterBin, "--config.file", exporterCfgFile, "--web.listen-address", exporterAddr, "--log.level", "error")
	exporter.waitReady(t, "http://"+exporterAddr+"/-/healthy")

	// The webhook receiver, Alertmanager with deploy/alertmanager's routes, Prometheus with
	// deploy/prometheus's jobs and the generated rules.
	recv := startReceiver(t)
	amAddr := testkit.UnusedAddr(t)
	amCfg := writeFile(t, work, "alertmanager.yml", alertmanagerConfig(t, root, recv.addr))
	am := startProcess(t, "alertmanager", alertmanagerBin, "--config.file="+amCfg, "--storage.path="+filepath.Join(work, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	am.waitReady(t, "http://"+amAddr+"/-/ready")

	cfg, err := packconfig.Parse([]byte(packOverrides))
	if err != nil {
		t.Fatal(err)
	}
	generated, err := rules.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ruleFiles []string
	for _, r := range generated {
		ruleFiles = append(ruleFiles, writeFile(t, work, filepath.Base(r.Path), r.Data))
	}
	promAddr := testkit.UnusedAddr(t)
	promCfg := writeFile(t, work, "prometheus.yml", prometheusConfig(t, root, ruleFiles, exporterAddr, appListener.Addr().String(), amAddr))
	prom := startProcess(t, "prometheus", prometheusBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(work, "tsdb"),
		"--web.listen-address="+promAddr, "--rules.alert.resend-delay="+interval.String())
	prom.waitReady(t, "http://"+promAddr+"/-/ready")
	// The same targets scraped for a multi-cluster pack (panels only: it sends no alerts).
	clusterPack := startClusterPrometheus(t, root, work, prometheusBin, exporterAddr, appListener.Addr().String())
	t.Logf("all servers up after %s", time.Since(start).Round(time.Second))

	// The whole incident must finish within budget, however the steps' own timeouts add up.
	budget := start.Add(9 * time.Minute)
	base := packconfig.Default().RunbookBaseURL
	expect := func(since time.Time, timeout time.Duration, alertname, status, path string, labels map[string]string) event {
		t.Helper()
		deadline := time.Now().Add(timeout)
		if deadline.After(budget) {
			deadline = budget
		}
		for {
			if e, ok := recv.find(since, alertname, status, labels); ok {
				t.Logf("%s %s via %s after %s: %v", alertname, status, e.Path, time.Since(start).Round(time.Second), e.Labels)
				if e.Path != path {
					t.Errorf("%s reached %s, want %s", alertname, e.Path, path)
				}
				if want := base + "#" + strings.ToLower(alertname); e.Annotations["runbook_url"] != want {
					t.Errorf("%s runbook_url = %q, want %q", alertname, e.Annotations["runbook_url"], want)
				}
				if e.Annotations["summary"] == "" || e.Annotations["description"] == "" {
					t.Errorf("%s lacks summary or description: %v", alertname, e.Annotations)
				}
				return e
			}
			if time.Now().After(deadline) {
				body, _ := getBody("http://" + promAddr + "/api/v1/alerts")
				t.Fatalf("no %s %s %v within %s\nreceived:\n%s\nPrometheus alerts: %s", status, alertname, labels, timeout, recv.summary(), body)
			}
			time.Sleep(time.Second)
		}
	}

	checkInhibition(t, recv, "http://"+amAddr)

	// 1. Faults on.
	noTTL := map[string]string{"severity": "warning", "lock_namespace": "reconciler", "job": "lock-exporter"}
	abandoned := map[string]string{"severity": "warning", "lock_namespace": "scheduler", "job": "lockwatch-apps"}
	expect(start, 2*time.Minute, rules.AlertKeyWithoutTTL, "firing", "/ticket", noTTL)
	expect(start, 4*time.Minute, rules.AlertAbandonmentsSustained, "firing", "/ticket", abandoned)

	// The demo's redis-py and Redisson services lapse and are taken over: before the panels are
	// run, the exporter's lifecycle counters have counted both in their namespaces, so the
	// lifecycle panels are proven on lapses and not on a row of zeros.
	for _, counted := range []string{
		`lock_key_ends_total{lock_namespace=~"redispy|redisson", reason="expired"} > 0`,
		`lock_key_takeovers_total{lock_namespace=~"redispy|redisson"} > 0`,
		`lock_exporter_lifecycle_following{lock_namespace=~"redispy|redisson"} == 1`,
	} {
		promAPI{base: "http://" + promAddr}.waitQuery(t, 2*time.Minute, counted)
	}
	// Every panel of both dashboards has data while the incident is on, for the default pack
	// and for the multi-cluster one.
	checkPanels(t, panelPack{name: "default pack", prom: panelSource{"http://" + promAddr}, dashboards: generateDashboards(t, packOverrides)})
	// The second Prometheus evaluates its own copy of the alert: the firing-alerts panel needs it
	// to have fired there too, which can be an evaluation behind the first.
	promAPI{base: clusterPack.prom.base}.waitQuery(t, time.Minute, `ALERTS{alertname="`+rules.AlertAbandonmentsSustained+`", alertstate="firing", lock_namespace="scheduler"}`)
	checkPanels(t, clusterPack)

	// 2. Recovery: faults off, the no-TTL lock deleted.
	recovered := time.Now()
	w.SetTurbulence(false)
	expect(recovered, 2*time.Minute, rules.AlertKeyWithoutTTL, "resolved", "/ticket", noTTL)
	expect(recovered, 3*time.Minute, rules.AlertAbandonmentsSustained, "resolved", "/ticket", abandoned)

	// 3. Redis stopped, then back.
	down := time.Now()
	srv.Kill()
	redisDown := map[string]string{"severity": "critical", "job": "lock-exporter"}
	expect(down, 2*time.Minute, rules.AlertExporterRedisDown, "firing", "/page", redisDown)
	up := time.Now()
	srv.Restart()
	expect(up, 2*time.Minute, rules.AlertExporterRedisDown, "resolved", "/page", redisDown)
	t.Logf("incident complete after %s", time.Since(start).Round(time.Second))
}

// quietRedis drops go-redis' own log lines (dial failures while Redis is stopped on purpose).
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{})
	testkit.VerifyTestMain(m)
}

// checkInhibition posts alerts straight to Alertmanager's API: a critical and a warning of one
// alert family and namespace, and a warning of the same family in another namespace. The
// critical must reach the page route, the other namespace's warning the ticket route, and the
// inhibited warning nothing.
func checkInhibition(t *testing.T, recv *receiver, amURL string) {
	t.Helper()
	const name = "LockNotOwnedRatioHigh"
	post := func(severity, namespace string) {
		t.Helper()
		body, err := json.Marshal([]map[string]any{{
			"labels":      map[string]string{"alertname": name, "severity": severity, "lock_namespace": namespace, "job": "inhibition-check"},
			"annotations": map[string]string{"summary": "posted by the e2e test"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("post alert: %s", resp.Status)
		}
	}
	since := time.Now()
	post("critical", "inhibited")
	post("warning", "inhibited")
	post("warning", "other")
	deadline := time.Now().Add(30 * time.Second)
	for {
		crit, okCrit := recv.find(since, name, "firing", map[string]string{"lock_namespace": "inhibited", "severity": "critical"})
		other, okOther := recv.find(since, name, "firing", map[string]string{"lock_namespace": "other", "severity": "warning"})
		if okCrit && okOther {
			if crit.Path != "/page" || other.Path != "/ticket" {
				t.Errorf("critical reached %s, warning reached %s; want /page and /ticket", crit.Path, other.Path)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("posted alerts not delivered within 30s:\n%s", recv.summary())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Give the inhibited warning several group intervals to (wrongly) show up.
	time.Sleep(3 * interval)
	if e, ok := recv.find(since, name, "firing", map[string]string{"lock_namespace": "inhibited", "severity": "warning"}); ok {
		t.Errorf("warning not inhibited by the critical of the same family and namespace: %v", e.Labels)
		return
	}
	t.Logf("inhibition: critical via /page, other namespace's warning via /ticket, same namespace's warning inhibited")
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// prometheusConfig is deploy/prometheus/prometheus.yml with this run's addresses, the generated
// rule files and short intervals. Its jobs must be the ones the deploy file defines.
func prometheusConfig(t *testing.T, root string, ruleFiles []string, exporterAddr, appAddr, amAddr string) []byte {
	t.Helper()
	cfg := readYAML(t, filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	global := cfg["global"].(map[string]any)
	global["scrape_interval"] = interval.String()
	global["evaluation_interval"] = interval.String()
	global["scrape_timeout"] = "1500ms"
	cfg["rule_files"] = ruleFiles
	am := cfg["alerting"].(map[string]any)["alertmanagers"].([]any)[0].(map[string]any)
	am["static_configs"] = []any{map[string]any{"targets": []string{amAddr}}}
	targets := map[string]string{"lock-exporter": exporterAddr, "lockwatch-apps": appAddr}
	jobs := cfg["scrape_configs"].([]any)
	if len(jobs) != len(targets) {
		t.Fatalf("deploy/prometheus has %d jobs, the test knows %d", len(jobs), len(targets))
	}
	for _, j := range jobs {
		job := j.(map[string]any)
		addr, ok := targets[job["job_name"].(string)]
		if !ok {
			t.Fatalf("deploy/prometheus job %v unknown to the test", job["job_name"])
		}
		job["static_configs"] = []any{map[string]any{"targets": []string{addr}}}
	}
	return marshal(t, cfg)
}

// alertmanagerConfig is deploy/alertmanager/alertmanager.yml with every webhook pointed at the
// test's receiver (keeping each URL's path, which tells the routes apart) and short grouping.
func alertmanagerConfig(t *testing.T, root, receiverAddr string) []byte {
	t.Helper()
	cfg := readYAML(t, filepath.Join(root, "deploy", "alertmanager", "alertmanager.yml"))
	route := cfg["route"].(map[string]any)
	route["group_wait"] = "1s"
	route["group_interval"] = interval.String()
	for _, r := range cfg["receivers"].([]any) {
		hooks, _ := r.(map[string]any)["webhook_configs"].([]any)
		if len(hooks) == 0 {
			t.Fatalf("receiver %v has no webhook to redirect", r)
		}
		for _, h := range hooks {
			hook := h.(map[string]any)
			u, err := url.Parse(hook["url"].(string))
			if err != nil {
				t.Fatal(err)
			}
			u.Host = receiverAddr
			hook["url"] = u.String()
		}
	}
	return marshal(t, cfg)
}
