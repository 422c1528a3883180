package lease

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redistest"
)

// BenchmarkCompanionKeys prices the companion keys against the plain lock in one run: an
// uncontended Acquire + Release per iteration, each parallel goroutine on its own key, with
// fencing (fence key), holder recording (holder key, a script instead of SET NX), or both.
func BenchmarkCompanionKeys(b *testing.B) {
	srv := redistest.Start(b)
	for _, bc := range []struct {
		name string
		p    Policy
	}{
		{"plain", Policy{}},
		{"fencing", Policy{Fencing: true}},
		{"holder", Policy{RecordHolder: true}},
		{"fencing+holder", Policy{Fencing: true, RecordHolder: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			defer rdb.Close()
			c, err := New(rdb, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			n, err := c.Declare("bench", bc.p)
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
