package lease

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
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
