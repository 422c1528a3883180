package otel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/lockwatch/lockwatch/lease"
)

// otlpMeterProvider is how an application that runs OpenTelemetry would build its provider:
// OTLP/HTTP straight to Prometheus' OTLP receiver (prometheus --web.enable-otlp-receiver) or to
// a collector, every 15s. service.name becomes the job label and service.instance.id the
// instance label, which the pack's recording rules aggregate by.
func otlpMeterProvider(ctx context.Context, endpointURL, service, instance string) (*metric.MeterProvider, error) {
	exporter, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpointURL))
	if err != nil {
		return nil, err
	}
	return metric.NewMeterProvider(
		metric.WithReader(metric.NewPeriodicReader(exporter, metric.WithInterval(15*time.Second))),
		metric.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName(service), semconv.ServiceInstanceID(instance))),
	), nil
}

// exampleRedis stands in for the application's client, which would be
// redis.NewClient(&redis.Options{Addr: …, ContextTimeoutEnabled: true}). It uses a database of
// the test server that it empties first, so every run of an example starts from the same state.
func exampleRedis() *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, DB: 1, ContextTimeoutEnabled: true})
	rdb.FlushDB(context.Background())
	return rdb
}

// An OpenTelemetry-instrumented application passes its MeterProvider to lease.New instead of a
// Registerer. The library starts no exporter of its own. Here a manual reader stands in for
// otlpMeterProvider(ctx, "http://prometheus:9090/api/v1/otlp/v1/metrics", "billing", hostname),
// so the example can show what the library records. (lease's own ExampleNew_openTelemetry
// shows the same call with the global provider, without the SDK.)
func Example_leaseOpenTelemetry() {
	ctx := context.Background()
	reader := metric.NewManualReader()
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer provider.Shutdown(ctx)
	_ = otlpMeterProvider // the production provider, above

	rdb := exampleRedis()
	defer rdb.Close()
	locks, err := lease.New(rdb, lease.Options{MeterProvider: provider})
	if err != nil {
		fmt.Println(err)
		return
	}
	invoices, err := locks.Declare("invoices", lease.Policy{TTL: 10 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = invoices.Do(ctx, "invoices:run:7", func(ctx context.Context, fence int64) error { return nil })
	if err != nil {
		fmt.Println(err)
		return
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		// Prometheus adds the unit ("s" → _seconds) and, to counters, _total.
		fmt.Printf("%s %s\n", m.Name, m.Unit)
	}
	// Output:
	// lock_acquire_wait_seconds s
	// lock_renewals {renewal}
	// lock_releases {release}
	// lock_abandoned {lease}
	// lock_held_seconds s
	// lock_held {lease}
	// lock_fenced_writes {write}
	// lock_waiters {caller}
	// lock_held_oldest_seconds s
	// lock_max_hold_exceeded {lease}
}
