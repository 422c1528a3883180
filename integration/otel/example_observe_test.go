package otel_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/lockwatch/lockwatch/observe"
)

// An OpenTelemetry-instrumented application passes its MeterProvider to observe.New instead of
// a Registerer; the Observer starts no exporter of its own. In production the provider would
// export OTLP to Prometheus' OTLP receiver or a collector (see otlpMeterProvider in
// Example_leaseOpenTelemetry); here a manual reader shows what the Observer reports as soon as
// it exists: its counters and lock_held at zero, named so that Prometheus adds _total to
// counters. The histograms appear with their first observation.
func Example_observeOpenTelemetry() {
	ctx := context.Background()
	reader := metric.NewManualReader()
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer provider.Shutdown(ctx)

	obs, err := observe.New(observe.Options{
		MeterProvider: provider,
		Namespaces:    []observe.Namespace{{Name: "scheduler", Pattern: "scheduler:job:*"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer obs.Close()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"}) // the client redislock or redsync uses
	defer rdb.Close()
	rdb.AddHook(obs.Hook())

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		fmt.Printf("%s %s\n", m.Name, m.Unit)
	}
	// Output:
	// lock_renewals {renewal}
	// lock_releases {release}
	// lock_held {lease}
	// lock_held_oldest_seconds s
	// lock_observe_untracked {lock}
	// lock_observe_unclassified_scripts {call}
}
