package lease_test

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/lockwatch/lockwatch/lease"
)

// An OpenTelemetry-instrumented application passes its MeterProvider instead of a Registerer:
// here the global one, which the application's own SDK set-up installs with
// otel.SetMeterProvider (until it does, the global provider records nothing). The library
// starts no exporter and links only the OTel metric API. How to build a provider that exports
// OTLP to Prometheus, and what the library then records, is the runnable
// Example_leaseOpenTelemetry in the repository's integration/otel (docs/lease.md shows it).
func ExampleNew_openTelemetry() {
	ctx := context.Background()
	rdb := exampleRedis()
	defer rdb.Close()
	locks, err := lease.New(rdb, lease.Options{MeterProvider: otel.GetMeterProvider()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locks.Close() // unregisters the library's callbacks from the provider
	invoices, err := locks.Declare("invoices", lease.Policy{TTL: 10 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = invoices.Do(ctx, "invoices:run:7", func(ctx context.Context, fence int64) error {
		fmt.Println("invoice run 7 holds its lease")
		return nil
	})
	fmt.Println("done:", err)
	// Output:
	// invoice run 7 holds its lease
	// done: <nil>
}
