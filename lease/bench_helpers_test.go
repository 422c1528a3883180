package lease

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// benchRedis is a go-redis client closed when b ends.
func benchRedis(b *testing.B, opts *redis.Options) *redis.Client {
	b.Helper()
	rdb := redis.NewClient(opts)
	b.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// declareBench declares the "bench" namespace with policy on a Client of its own over rdb,
// its logs discarded so that they cost nothing measurable; the Client is closed when b ends.
func declareBench(b *testing.B, rdb *redis.Client, opts Options, policy Policy) *Namespace {
	b.Helper()
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := New(rdb, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	n, err := c.Declare("bench", policy)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// acquireRelease is one cycle of the benchmarks: take key with acquire, then release it.
func acquireRelease(ctx context.Context, acquire func(context.Context, string) (*Lease, error), key string) error {
	l, err := acquire(ctx, key)
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

// benchParallelAcquireRelease runs uncontended Acquire + Release cycles in parallel, each
// goroutine on a key of its own under prefix, and reports allocations.
func benchParallelAcquireRelease(b *testing.B, n *Namespace, prefix string) {
	var seq atomic.Int64
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		key := prefix + ":" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			if err := acquireRelease(ctx, n.Acquire, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// acquireReleaseCase is one row of an uncontended Acquire + Release benchmark.
type acquireReleaseCase struct {
	name    string
	metrics bool // on: a fresh registry per run; off: no metrics path at all
	opts    Options
	policy  Policy
}

// benchAcquireReleaseCases runs each case as a sub-benchmark of parallel uncontended Acquire +
// Release cycles, on a redis-server of its own and a Client per run.
func benchAcquireReleaseCases(b *testing.B, cases []acquireReleaseCase) {
	srv := redistest.Start(b)
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			rdb := benchRedis(b, &redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			opts := bc.opts
			if bc.metrics {
				opts.Registerer = prometheus.NewRegistry()
			}
			benchParallelAcquireRelease(b, declareBench(b, rdb, opts, bc.policy), bc.name)
		})
	}
}

// median is the middle of xs (the mean of the two middle values for an even count); 0 for none.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
