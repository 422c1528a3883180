package lease

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redistest"
)

// BenchmarkAcquireRelease measures an uncontended Acquire + Release round: each parallel
// goroutine works on its own key, with the default policy (renewer armed and stopped). The
// batching row is Options.Batching; its gain grows with the number of concurrent callers, so
// compare it with -cpu 16 as well as the default.
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b)
	for _, bc := range []struct {
		name     string
		metrics  bool
		fencing  bool
		batching bool
	}{
		{"metrics=on", true, false, false},
		{"metrics=off", false, false, false},
		{"metrics=on,fencing=on", true, true, false},
		{"metrics=on,batching=on", true, false, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rdb := benchRedis(b, &redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			opts := Options{Batching: bc.batching}
			if bc.metrics {
				opts.Registerer = prometheus.NewRegistry()
			}
			n := declareBench(b, rdb, opts, Policy{Fencing: bc.fencing})
			benchParallelAcquireRelease(b, n, bc.name)
		})
	}
}
