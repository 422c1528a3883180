package lease

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
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
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			defer rdb.Close()
			opts := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Batching: bc.batching}
			if bc.metrics {
				opts.Registerer = prometheus.NewRegistry()
			}
			c, err := New(rdb, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			n, err := c.Declare("bench", Policy{Fencing: bc.fencing})
			if err != nil {
				b.Fatal(err)
			}
			var seq atomic.Int64
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := bc.name + ":" + strconv.FormatInt(seq.Add(1), 10)
				for pb.Next() {
					l, err := n.Acquire(ctx, key)
					if err != nil {
						b.Error(err)
						return
					}
					if err := l.Release(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
