// Package metricnamestest gathers the metric names the lease library and the lock exporter really
// expose, from real registries fed by a real redis-server. The pack's cross-checks (every
// metric a rule or a dashboard query reads must exist) compare against this set instead of a
// hand-kept list, so a renamed metric breaks them.
package metricnamestest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/lease"
)

// Seeded lock keys: one with an expiry (and a holder key, as lease writes with RecordHolder) and
// one without, so that every exporter family that depends on what it finds (smallest TTL, keys
// without TTL, idle times, the stalest keys and their holders) is present.
const (
	namespace     = "scheduler"
	pattern       = "scheduler:job:*"
	keyWithTTL    = "scheduler:job:1"
	keyWithoutTTL = "scheduler:job:2"
	target        = "metricnames" // the exporter's one target, the same Redis
)

// Gathered starts a redis-server, declares a namespace on a lease client registered on a fresh
// registry, runs the real exporter over seeded keys (its metrics path and one target's scrape),
// and returns every sample name the library and the exporter expose. Histogram families expand
// to their _bucket, _sum and _count series and summaries to the name, _sum and _count, which is
// how PromQL sees them.
func Gathered(tb testing.TB) map[string]bool {
	tb.Helper()
	srv := redistest.Start(tb)
	rdb := srv.Client(tb)
	names := map[string]bool{}
	addFamilies(tb, names, libraryRegistry(tb, rdb))
	seedLockKeys(tb, rdb)
	families := exporterFamilies(tb, srv.Addr)
	for _, mf := range families {
		for _, n := range SampleNames(mf) {
			names[n] = true
		}
	}
	// A scan that failed would silently drop most exporter families; make that loud.
	if up := gaugeValue(families, "lock_exporter_up"); up != 1 {
		tb.Fatalf("metricnames: the exporter's scan of %s failed (lock_exporter_up %v)", srv.Addr, up)
	}
	return names
}

// quiet is the logger of the library and the exporter here: their logs are not the subject.
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// libraryRegistry is a fresh registry with a lease client's metrics on it. Declaring a
// namespace creates every series of the library at zero, so all are gathered.
func libraryRegistry(tb testing.TB, rdb redis.UniversalClient) *prometheus.Registry {
	tb.Helper()
	reg := prometheus.NewRegistry()
	client, err := lease.New(rdb, lease.Options{Registerer: reg, Logger: quiet()})
	if err != nil {
		tb.Fatalf("metricnames: lease.New: %v", err)
	}
	if _, err := client.Declare(namespace, lease.Policy{TTL: time.Minute, Fencing: true}); err != nil {
		tb.Fatalf("metricnames: declare namespace: %v", err)
	}
	return reg
}

// seedLockKeys writes the seeded lock keys and the holder key of the one with an expiry.
func seedLockKeys(tb testing.TB, rdb redis.UniversalClient) {
	tb.Helper()
	for _, k := range []struct {
		key, value string
		ttl        time.Duration
	}{
		{keyWithTTL, "seeded", time.Minute},
		{keyWithoutTTL, "seeded", 0},
		// With an acquisition time (lockkeys.ParseHolder), so the hold-age series appear.
		{lockkeys.Holder(keyWithTTL), "metricnames pid 1" + lockkeys.HolderAcquiredSeparator + "1700000000000", time.Minute},
	} {
		if err := rdb.Set(context.Background(), k.key, k.value, k.ttl).Err(); err != nil {
			tb.Fatalf("metricnames: seed: %v", err)
		}
	}
}

// exporterFamilies runs the real exporter (exporter.Serve) on a free loopback port over the
// Redis at addr, as its own Redis and as one target, and returns the families of its metrics
// path and of the target's scrape: the scan metrics and the exporter's own (build info, reload
// and target metrics), as Prometheus would scrape them.
func exporterFamilies(tb testing.TB, addr string) []*dto.MetricFamily {
	tb.Helper()
	cfg := exporterconfig.Defaults()
	cfg.Redis.Addr = addr
	cfg.Namespaces = []exporterconfig.Namespace{{
		Name:                  namespace,
		Pattern:               pattern,
		ExpectedTTL:           exporterconfig.Duration(time.Minute),
		ExpectedRenewInterval: exporterconfig.Duration(20 * time.Second),
		ExpectedMaxHold:       exporterconfig.Duration(time.Hour),
	}}
	cfg.Targets = []exporterconfig.Target{{Name: target, Redis: exporterconfig.Redis{Addr: addr}}}
	if err := cfg.Validate(); err != nil {
		tb.Fatalf("metricnames: exporter configuration: %v", err)
	}
	listening := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- exporter.Serve(ctx, exporter.Options{
			Config:    cfg,
			Web:       exporter.Web{ListenAddresses: []string{"127.0.0.1:0"}, TelemetryPath: "/metrics"},
			Logger:    quiet(),
			Listening: func(addrs []string) { listening <- addrs[0] },
		})
	}()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			tb.Errorf("metricnames: exporter: %v", err)
		}
	}()
	var base string
	select {
	case a := <-listening:
		base = "http://" + a
	case err := <-served:
		tb.Fatalf("metricnames: exporter did not start: %v", err)
	}
	var families []*dto.MetricFamily
	for _, path := range []string{"/metrics", exporter.ScrapePath + "?target=" + target} {
		families = append(families, scrape(tb, base+path)...)
	}
	return families
}

// scrape fetches url and parses its text exposition.
func scrape(tb testing.TB, url string) []*dto.MetricFamily {
	tb.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		tb.Fatalf("metricnames: %v", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		tb.Fatalf("metricnames: %s: %v", url, err)
	}
	families := make([]*dto.MetricFamily, 0, len(byName))
	for _, mf := range byName {
		families = append(families, mf)
	}
	return families
}

func addFamilies(tb testing.TB, names map[string]bool, g prometheus.Gatherer) []*dto.MetricFamily {
	tb.Helper()
	families, err := g.Gather()
	if err != nil {
		tb.Fatalf("metricnames: gather: %v", err)
	}
	for _, mf := range families {
		for _, n := range SampleNames(mf) {
			names[n] = true
		}
	}
	return families
}

// SampleNames returns the series names PromQL sees for a metric family.
func SampleNames(mf *dto.MetricFamily) []string {
	name := mf.GetName()
	switch mf.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []string{name + "_bucket", name + "_sum", name + "_count"}
	case dto.MetricType_SUMMARY:
		return []string{name, name + "_sum", name + "_count"}
	}
	return []string{name}
}

func gaugeValue(families []*dto.MetricFamily, name string) float64 {
	for _, mf := range families {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
