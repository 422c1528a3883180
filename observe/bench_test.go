package observe

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// BenchmarkHookCycle is the hook's own work for one redislock-shaped cycle (acquire script,
// release by EVALSHA), without a server: what the observer adds to a lock cycle's client CPU,
// on each metrics path.
func BenchmarkHookCycle(b *testing.B) {
	namespaces := []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	paths := []struct {
		name string
		opts Options
	}{
		{"prometheus", Options{Registerer: prometheus.NewRegistry(), Namespaces: namespaces}},
		{"otel", Options{MeterProvider: mp, Namespaces: namespaces}},
	}
	acquire := goRedisArgs{"evalsha", "80a1b5f2cfccec3b7119ba7721d2127682b691a7", 1, "jobs:bench", "0123456789abcdef0123456789abcdef", 22, "10000"}
	release := goRedisArgs{"evalsha", "cf0e94b2e9ffc7e04395cf88f7583fc309985910", 1, "jobs:bench", "0123456789abcdef0123456789abcdef"}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			o, err := New(p.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer o.Close()
			b.ReportAllocs()
			for b.Loop() {
				begin(o, acquire).Done(Reply{})
				begin(o, release).Done(Reply{Int: 1, IsInt: true})
			}
		})
	}
}
