package otel_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/observe"
)

// BenchmarkObserveHookCycle is the hook's own work for one redislock-shaped cycle (acquire
// script, release by EVALSHA), without a server: what the observer adds to a lock cycle's
// client CPU, on each metrics path. The commands go through the go-redis hook the application
// adds (Observer.Hook), whose next step answers as the server would, so the figure includes
// reading go-redis' arguments and reply and nothing of the network.
func BenchmarkObserveHookCycle(b *testing.B) {
	namespaces := []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	paths := []struct {
		name string
		opts observe.Options
	}{
		{"prometheus", observe.Options{Registerer: prometheus.NewRegistry(), Namespaces: namespaces}},
		{"otel", observe.Options{MeterProvider: mp, Namespaces: namespaces}},
	}
	ctx := context.Background()
	const value = "0123456789abcdef0123456789abcdef"
	acquire := redis.NewCmd(ctx, "evalsha", "80a1b5f2cfccec3b7119ba7721d2127682b691a7", 1, "jobs:bench", value, 22, "10000")
	release := redis.NewCmd(ctx, "evalsha", "cf0e94b2e9ffc7e04395cf88f7583fc309985910", 1, "jobs:bench", value)
	// The server's replies: redislock's obtain script answers OK, its release script 1.
	answer := func(_ context.Context, cmd redis.Cmder) error {
		if cmd == acquire {
			acquire.SetVal("OK")
		} else {
			release.SetVal(int64(1))
		}
		return nil
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			o, err := observe.New(p.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			process := o.Hook().ProcessHook(answer)
			b.ReportAllocs()
			cycles := 0
			for b.Loop() {
				_ = process(ctx, acquire)
				_ = process(ctx, release)
				cycles++
			}
			// A misread reply leaves the lock held, or a release uncounted, or its state kept
			// (a released lock's entry is dropped at once). The OTel path reports what the
			// Prometheus path does (the OTel tests compare them).
			if n := o.Tracked(); n != 0 {
				b.Fatalf("after %d cycles: %d locks tracked, want 0: a reply was misread", cycles, n)
			}
			if reg, ok := p.opts.Registerer.(*prometheus.Registry); ok {
				held := testkit.MetricValue(b, reg, "lock_held", "lock_namespace", "jobs")
				released := testkit.MetricValue(b, reg, "lock_releases_total", "lock_namespace", "jobs", "outcome", "ok")
				if held != 0 || released != float64(cycles) {
					b.Fatalf("after %d cycles: lock_held %v, releases ok %v: a reply was misread", cycles, held, released)
				}
			}
		})
	}
}
