package peertest

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/observe/rueidisobserve"
)

// cycle is one lock cycle (acquire, release) of a library; it reports failures through b.
type cycle func(b *testing.B)

// BenchmarkOverhead measures the client CPU (this process's user+system time, from getrusage;
// redis-server is another process) of a lock cycle with and without the observe hook, the
// same library on the same server in the same run. Three variants take turns in blocks of 250
// cycles, their order rotating each round: the library plain, the library plain on a second
// client (the control: what the harness reports as "overhead" for no change at all), and the
// library observed. Each round gives a paired ratio against the plain block next to it; the
// medians of those ratios are the results, so that load from other processes, which comes
// and goes between rounds, falls out:
//
//	cd observe/peertest && go test -run '^$' -bench Overhead -benchtime 40000x
func BenchmarkOverhead(b *testing.B) {
	libs := []struct {
		name  string
		build func(b *testing.B, e *env, observed bool) cycle
	}{
		{"redislock", redislockCycle},
		{"redsync", redsyncCycle},
		{"rueidislock", rueidislockCycle},
	}
	for _, lib := range libs {
		b.Run(lib.name, func(b *testing.B) {
			e := &env{srv: redistest.Start(b)}
			e.observeTB(b, "*jobs:*")
			variants := []cycle{lib.build(b, e, false), lib.build(b, e, false), lib.build(b, e, true)}
			const block = 250
			var total [3]time.Duration
			var control, overhead []float64
			b.ResetTimer()
			for round, ran := 0, 0; ran < b.N; round++ {
				var cpu [3]time.Duration
				for i := range 3 {
					v := (round + i) % 3
					start := cpuTime(b)
					for range block {
						variants[v](b)
					}
					cpu[v] = cpuTime(b) - start
					total[v] += cpu[v]
				}
				control = append(control, ratio(cpu[1], cpu[0]))
				overhead = append(overhead, ratio(cpu[2], cpu[0]))
				ran += block
			}
			cycles := float64(len(control) * block)
			b.ReportMetric(float64(total[0].Nanoseconds())/cycles, "plain-cpu-ns/cycle")
			b.ReportMetric(float64(total[2].Nanoseconds())/cycles, "observed-cpu-ns/cycle")
			b.ReportMetric(median(control), "control-%")
			b.ReportMetric(median(overhead), "overhead-%")
		})
	}
}

// ratio is how much more CPU a took than b, in percent.
func ratio(a, b time.Duration) float64 { return 100 * (float64(a) - float64(b)) / float64(b) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func goRedisClient(b *testing.B, e *env, observed bool) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: e.srv.Addr})
	b.Cleanup(func() { _ = rdb.Close() })
	if observed {
		rdb.AddHook(e.obs.Hook())
	}
	return rdb
}

func redislockCycle(b *testing.B, e *env, observed bool) cycle {
	locker := redislock.New(goRedisClient(b, e, observed))
	ctx := context.Background()
	return func(b *testing.B) {
		l, err := locker.Obtain(ctx, "jobs:bench", 10*time.Second, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func redsyncCycle(b *testing.B, e *env, observed bool) cycle {
	rs := redsync.New(goredis.NewPool(goRedisClient(b, e, observed)))
	return func(b *testing.B) {
		m := rs.NewMutex("jobs:bench", redsync.WithTries(1), redsync.WithExpiry(10*time.Second))
		if err := m.Lock(); err != nil {
			b.Fatal(err)
		}
		if ok, err := m.Unlock(); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func rueidislockCycle(b *testing.B, e *env, observed bool) cycle {
	opt := rueidislock.LockerOption{
		KeyPrefix: "lw", KeyValidity: 10 * time.Second, ExtendInterval: time.Minute, TryNextAfter: time.Second,
		ClientOption: rueidis.ClientOption{InitAddress: []string{e.srv.Addr}},
	}
	if observed {
		opt.ClientBuilder = rueidisobserve.ClientBuilder(e.obs)
	}
	locker, err := rueidislock.NewLocker(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(locker.Close)
	return func(b *testing.B) {
		_, cancel, err := locker.TryWithContext(context.Background(), "jobs:bench")
		if err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}
