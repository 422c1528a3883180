package lease

import (
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
			rdb := benchRedis(b, &redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
			n := declareBench(b, rdb, Options{}, bc.p)
			benchParallelAcquireRelease(b, n, bc.name)
		})
	}
}
