package peertest

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/lockwatch/lockwatch/observe/rueidisobserve"
)

// cycle is one lock cycle (acquire, release) of a library; it reports failures through b.
type cycle func(b *testing.B)

// BenchmarkOverhead measures the client CPU (this process's user+system time, from getrusage;
// redis-server is another process) of a lock cycle with and without the observe hook, the
// same library on the same server in the same run. The two variants alternate in blocks, so
// drift of the shared machine falls on both; the ratio is the result:
//
//	cd observe/peertest && go test -run '^$' -bench Overhead -benchtime 20000x -count 3
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
			plain, observed := lib.build(b, e, false), lib.build(b, e, true)
			const block = 500
			var cpu [2]time.Duration
			var n [2]int
			b.ResetTimer()
			for done := 0; done < b.N; {
				for v, run := range []cycle{plain, observed} {
					k := min(block, b.N-done)
					start := cpuTime(b)
					for range k {
						run(b)
					}
					cpu[v] += cpuTime(b) - start
					n[v] += k
				}
				done += min(block, b.N-done)
			}
			perPlain := float64(cpu[0].Nanoseconds()) / float64(n[0])
			perObserved := float64(cpu[1].Nanoseconds()) / float64(n[1])
			b.ReportMetric(perPlain, "plain-cpu-ns/cycle")
			b.ReportMetric(perObserved, "observed-cpu-ns/cycle")
			b.ReportMetric(100*(perObserved-perPlain)/perPlain, "overhead-%")
		})
	}
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
