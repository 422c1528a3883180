package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// Job labels of the two paths: the scrape job, and the OTLP service.name that Prometheus'
// receiver turns into job.
const (
	scrapeJob = "lockwatch-apps"
	otlpJob   = "lockwatch-otlp"
)

// TestOTLPPathDrivesTheSameAlert runs one lease workload twice over, on the client_golang
// path (scraped) and on the OTel path (OTLP/HTTP pushed to Prometheus' OTLP receiver), with the
// same injected fault: the worker pauses past its TTL, a new owner takes the lock, and the stale
// worker's release finds it owned by someone else. Prometheus loads the committed
// alerts/*.yml unchanged. The test checks that
//
//  1. the OTLP path's series are the scrape path's, name for name and label for label, after
//     Prometheus' default OTLP translation (job and instance aside), with the same buckets;
//  2. LockNotOwnedRatioHigh (critical, for: 2m) fires for both jobs.
func TestOTLPPathDrivesTheSameAlert(t *testing.T) {
	start, root, work, prometheusBin := startE2E(t, "redis-server")
	srv := redistest.Start(t)

	// Prometheus first: the OTLP exporter pushes to it from the start.
	appListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := testkit.UnusedAddr(t)
	promCfg := writeFile(t, work, "prometheus.yml", otlpPrometheusConfig(t, root, appListener.Addr().String()))
	prom := startProcess(t, "prometheus", prometheusBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(work, "tsdb"),
		"--web.listen-address="+promAddr, "--web.enable-otlp-receiver")
	prom.waitReady(t, "http://"+promAddr+"/-/ready")
	api := promAPI{base: "http://" + promAddr}
	api.wantRulesLoaded(t)

	// The scrape path: a registry served as an application would.
	reg := prometheus.NewRegistry()
	app := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = app.Serve(appListener) }()
	defer app.Close()

	// The OTel path: an SDK MeterProvider pushing OTLP/HTTP every second.
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	exporter, err := otlpmetrichttp.New(context.Background(),
		otlpmetrichttp.WithEndpointURL("http://"+promAddr+"/api/v1/otlp/v1/metrics"),
		otlpmetrichttp.WithHTTPClient(&http.Client{Transport: transport, Timeout: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exporter, sdkmetric.WithInterval(time.Second))),
		sdkmetric.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName(otlpJob), semconv.ServiceInstanceID("worker-1"))),
	)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := mp.Shutdown(ctx); err != nil {
			t.Errorf("MeterProvider shutdown: %v", err)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for key, opts := range map[string]lease.Options{"approval:scrape": {Registerer: reg}, "approval:otlp": {MeterProvider: mp}} {
		n := staleReleaseNamespace(t, srv.Addr, opts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := staleReleaseWorkload(ctx, n, key); err != nil {
				t.Errorf("workload: %v", err)
			}
		}()
	}

	// 1. Both paths' series, once both have counted stale releases.
	notOwned := `lock_releases_total{lock_namespace="approval",outcome="not_owned",job=%q} > 0`
	for _, job := range []string{scrapeJob, otlpJob} {
		api.waitQuery(t, time.Minute, fmt.Sprintf(notOwned, job))
	}
	compareSeries(t, api.series(t, scrapeJob), api.series(t, otlpJob))
	t.Logf("both paths' series agree after %s", time.Since(start).Round(time.Second))

	// 2. The committed critical tier has for: 2m.
	for _, job := range []string{scrapeJob, otlpJob} {
		api.waitAlert(t, 3*time.Minute, rules.AlertNotOwnedRatioHigh, map[string]string{
			"job": job, "lock_namespace": "approval", "severity": "critical",
		})
		t.Logf("%s firing for job %s after %s", rules.AlertNotOwnedRatioHigh, job, time.Since(start).Round(time.Second))
	}
}

// staleReleaseNamespace is an approval namespace on its own Client with opts' metrics: a short
// TTL and no renewal, so a worker that pauses loses its lease.
func staleReleaseNamespace(t *testing.T, addr string, opts lease.Options) *lease.Namespace {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := lease.New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Declare("approval", lease.Policy{TTL: 50 * time.Millisecond, DisableRenewal: true})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// staleReleaseWorkload repeats the fault until ctx ends: a worker takes the lock and pauses past
// its TTL, a second worker takes the expired lock, the first one's release finds it not owned,
// the second one releases normally. Half of all releases are not owned.
func staleReleaseWorkload(ctx context.Context, n *lease.Namespace, key string) error {
	for ctx.Err() == nil {
		stale, err := n.TryAcquire(ctx, key)
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		select { // the pause: longer than the TTL
		case <-ctx.Done():
		case <-time.After(n.Policy().TTL + 10*time.Millisecond):
		}
		next, err := n.TryAcquire(ctx, key)
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		if err := stale.Release(context.Background()); !errors.Is(err, lease.ErrNotOwned) {
			return fmt.Errorf("stale release: %v, want ErrNotOwned", err)
		}
		// On a loaded machine the second lease can lapse too before its release; that release
		// is then not owned as well, which the alert counts the same way.
		if err := next.Release(context.Background()); err != nil && !errors.Is(err, lease.ErrNotOwned) {
			return err
		}
	}
	return nil
}

func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// otlpPrometheusConfig loads the committed rule files as they are, scrapes the application's
// registry as job lockwatch-apps, and pins the OTLP receiver's translation to the strategy the
// instruments are named for (Prometheus' default).
func otlpPrometheusConfig(t *testing.T, root, appAddr string) []byte {
	t.Helper()
	return marshal(t, map[string]any{
		"global": map[string]any{
			"scrape_interval":     interval.String(),
			"evaluation_interval": interval.String(),
			"scrape_timeout":      "1500ms",
		},
		"rule_files": []string{
			filepath.Join(root, "alerts", "lockwatch-recording.yml"),
			filepath.Join(root, "alerts", "lockwatch-alerts.yml"),
		},
		"otlp": map[string]any{"translation_strategy": "UnderscoreEscapingWithSuffixes"},
		"scrape_configs": []any{map[string]any{
			"job_name":       scrapeJob,
			"static_configs": []any{map[string]any{"targets": []string{appAddr}}},
		}},
	})
}

// promAPI queries Prometheus' HTTP API.
type promAPI struct{ base string }

func (p promAPI) get(t *testing.T, path string, query url.Values, data any) {
	t.Helper()
	body, err := getBody(p.base + path + "?" + query.Encode())
	if err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var resp struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Status != "success" {
		t.Fatalf("%s: %v %s", path, err, body)
	}
	if err := json.Unmarshal(resp.Data, data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// wantRulesLoaded checks that every group of the committed rule files loaded.
func (p promAPI) wantRulesLoaded(t *testing.T) {
	t.Helper()
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []any  `json:"rules"`
		} `json:"groups"`
	}
	p.get(t, "/api/v1/rules", nil, &data)
	var alertRules int
	for _, g := range data.Groups {
		if !strings.HasPrefix(g.Name, "lockwatch-") || len(g.Rules) == 0 {
			t.Errorf("unexpected rule group %q with %d rules", g.Name, len(g.Rules))
		}
		alertRules += len(g.Rules)
	}
	if len(data.Groups) == 0 {
		t.Fatal("Prometheus loaded no rule groups")
	}
	t.Logf("Prometheus loaded %d rule groups, %d rules, from alerts/*.yml", len(data.Groups), alertRules)
}

// waitQuery waits until the instant query expr returns a sample.
func (p promAPI) waitQuery(t *testing.T, timeout time.Duration, expr string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var data struct {
			Result []any `json:"result"`
		}
		p.get(t, "/api/v1/query", url.Values{"query": {expr}}, &data)
		if len(data.Result) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result for %s within %s", expr, timeout)
		}
		time.Sleep(time.Second)
	}
}

// waitAlert waits until an alert named name with (at least) labels is firing.
func (p promAPI) waitAlert(t *testing.T, timeout time.Duration, name string, labels map[string]string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		p.get(t, "/api/v1/alerts", nil, &data)
		for _, a := range data.Alerts {
			if a.State == "firing" && a.Labels["alertname"] == name && hasLabels(a.Labels, labels) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v not firing within %s; alerts: %+v", name, labels, timeout, data.Alerts)
		}
		time.Sleep(time.Second)
	}
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// series returns job's lock_* series as name{label="value",…} strings without job and instance.
// Bucket bounds are compared as numbers: Prometheus 3 stores a scraped classic histogram's le
// as "1.0" but an OTLP bucket's as "1"; histogram_quantile, which the pack uses, reads both.
func (p promAPI) series(t *testing.T, job string) map[string]bool {
	t.Helper()
	var data []map[string]string
	p.get(t, "/api/v1/series", url.Values{"match[]": {fmt.Sprintf(`{__name__=~"lock_.+",job=%q}`, job)}}, &data)
	out := map[string]bool{}
	for _, labels := range data {
		name := labels["__name__"]
		delete(labels, "__name__")
		delete(labels, "job")
		delete(labels, "instance")
		var pairs []string
		if le, ok := labels["le"]; ok {
			bound, err := strconv.ParseFloat(le, 64)
			if err != nil {
				t.Fatalf("%s: le %q: %v", name, le, err)
			}
			labels["le"] = strconv.FormatFloat(bound, 'g', -1, 64)
		}
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			pairs = append(pairs, fmt.Sprintf("%s=%q", k, labels[k]))
		}
		out[name+"{"+strings.Join(pairs, ",")+"}"] = true
	}
	return out
}

// compareSeries requires the OTLP path to hold exactly the scrape path's series, except the
// histogram series the client_golang path creates at zero for outcomes that never happened
// (busy, error): OTel creates a histogram series with its first observation.
func compareSeries(t *testing.T, scrape, otlp map[string]bool) {
	t.Helper()
	if len(otlp) == 0 {
		t.Fatal("no lock_* series from the OTLP path")
	}
	for s := range otlp {
		if !scrape[s] {
			t.Errorf("OTLP only: %s", s)
		}
	}
	for s := range scrape {
		if otlp[s] {
			continue
		}
		unobserved := strings.Contains(s, `outcome="busy"`) || strings.Contains(s, `outcome="error"`)
		if !strings.HasPrefix(s, "lock_acquire_wait_seconds_") || !unobserved {
			t.Errorf("scrape only: %s", s)
		}
	}
	if t.Failed() {
		t.Logf("scrape series:\n%s", strings.Join(slices.Sorted(maps.Keys(scrape)), "\n"))
		t.Logf("OTLP series:\n%s", strings.Join(slices.Sorted(maps.Keys(otlp)), "\n"))
	}
}
