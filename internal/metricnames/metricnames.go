// Package metricnames gathers the metric names the lease library and the lock exporter really
// expose, from real registries fed by a real redis-server. The pack's cross-checks (every
// metric a rule or a dashboard query reads must exist) compare against this set instead of a
// hand-kept list, so a renamed metric breaks them.
package metricnames

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/exporter"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/redistest"
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
)

// Gathered starts a redis-server, declares a namespace on a lease client registered on a fresh
// registry, scans seeded keys with the exporter's collectors on another fresh registry, and
// returns every sample name the two registries expose. Histogram families expand to their
// _bucket, _sum and _count series and summaries to the name, _sum and _count, which is how
// PromQL sees them. The exporter's Go and process collectors are not included: the pack does
// not read them.
func Gathered(tb testing.TB) map[string]bool {
	tb.Helper()
	srv := redistest.Start(tb)
	rdb := srv.Client(tb)
	names := map[string]bool{}
	addFamilies(tb, names, libraryRegistry(tb, rdb))
	seedLockKeys(tb, rdb)
	families := addFamilies(tb, names, exporterRegistry(tb, rdb))
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
		{lockkeys.Holder(keyWithTTL), "metricnames pid 1", time.Minute},
	} {
		if err := rdb.Set(context.Background(), k.key, k.value, k.ttl).Err(); err != nil {
			tb.Fatalf("metricnames: seed: %v", err)
		}
	}
}

// exporterRegistry is a fresh registry with the exporter's lock collectors over rdb on it; the
// scanner is closed when tb ends.
func exporterRegistry(tb testing.TB, rdb redis.UniversalClient) *prometheus.Registry {
	tb.Helper()
	scanner, err := collectors.NewScanner(rdb, collectors.Options{
		Namespaces: []collectors.Namespace{{
			Name:                  namespace,
			Pattern:               pattern,
			ExpectedTTL:           time.Minute,
			ExpectedRenewInterval: 20 * time.Second,
		}},
		Logger: quiet(),
	})
	if err != nil {
		tb.Fatalf("metricnames: collectors.NewScanner: %v", err)
	}
	tb.Cleanup(scanner.Close)
	reg := prometheus.NewRegistry()
	reg.MustRegister(scanner.Collector(context.Background()), exporter.NewBuildInfoCollector())
	return reg
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
