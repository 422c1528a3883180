package peertest

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/prometheus/client_golang/prometheus"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/observe"
)

// A Redlock over several servers with one observer on all of its go-redis clients: a lock
// taken by quorum is one acquisition, one renewal per Extend and one release, whatever the
// servers answer one by one; a server down is no failed renew or release. Contended (workers
// share two keys), tries that miss their quorum, and redsync's clean-up release on every server
// after them, are part of the traffic: a try that took a minority of servers is a failed try,
// not an acquisition and a short hold, so every count is exact there too.
func TestRedsyncQuorumCountsOnce(t *testing.T) {
	for _, c := range []struct {
		name           string
		servers, alive int
		contended      bool
	}{
		{"3-servers", 3, 3, false}, {"4-servers", 4, 4, false}, {"3-servers-one-down", 3, 2, false},
		{"3-servers-contended", 3, 3, true}, {"4-servers-contended", 4, 4, true},
		{"3-servers-one-down-contended", 3, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// GiveUpAfter longer than a try that waits for a stopped server's dial (about a
			// second under -race): a wait given up mid-try forgets its value, and the try's
			// clean-up replies would then count as releases of their own.
			e := &env{reg: prometheus.NewRegistry()}
			obs, err := observe.New(observe.Options{Registerer: e.reg,
				Namespaces: []observe.Namespace{{Name: ns, Pattern: "jobs:*"}}, GiveUpAfter: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			e.obs = obs
			if c.alive < c.servers {
				// Registered first, so it runs last, after the clients are closed.
				t.Cleanup(func() { waitDialRetries(t) })
			}
			pools := make([]redis.Pool, c.servers)
			for i := range pools {
				srv := redistest.Start(t)
				rdb := goredislib.NewClient(&goredislib.Options{Addr: srv.Addr, MaxRetries: -1})
				t.Cleanup(func() { _ = rdb.Close() })
				rdb.AddHook(e.obs.Hook())
				pools[i] = goredis.NewPool(rdb)
				if i >= c.alive {
					srv.Kill()
				}
			}
			rs := redsync.New(pools...)
			const workers, rounds = 4, 5
			var taken, extended atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, workers*rounds)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						key := fmt.Sprintf("jobs:w%d", w)
						if c.contended {
							key = fmt.Sprintf("jobs:%d", (w+r)%2)
						}
						m := rs.NewMutex(key, redsync.WithExpiry(5*time.Second),
							redsync.WithTries(500), redsync.WithRetryDelay(5*time.Millisecond))
						if err := m.Lock(); err != nil {
							errs <- fmt.Errorf("lock: %w", err)
							continue
						}
						taken.Add(1)
						if ok, err := m.Extend(); ok {
							extended.Add(1)
						} else {
							errs <- fmt.Errorf("extend: %v", err)
						}
						if ok, err := m.Unlock(); !ok {
							errs <- fmt.Errorf("unlock: %v", err)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			n := float64(taken.Load())
			if n == 0 {
				t.Fatal("no lock taken")
			}
			e.check(t,
				want{"lock_acquire_wait_seconds", "acquired", n},
				want{"lock_releases_total", "ok", n},
				want{"lock_releases_total", "not_owned", 0},
				want{"lock_releases_total", "error", 0},
				want{"lock_renewals_total", "ok", float64(extended.Load())},
				want{"lock_renewals_total", "not_owned", 0},
				want{"lock_renewals_total", "failed", 0},
				want{"lock_held", "", 0},
			)
			// Contended callers that retried are waiters until they acquire: none is left.
			if v, present := e.waiters(t); present && v != 0 {
				t.Errorf("lock_waiters = %v after every lock was taken, want 0", v)
			}
		})
	}
}

// waitDialRetries waits for go-redis' background redials of a stopped server, which notice
// their client closed only after their own back-off (a second), so that goleak does not
// report them.
func waitDialRetries(t *testing.T) {
	e := &env{}
	e.eventually(t, "go-redis' redials to end", func() bool {
		buf := make([]byte, 1<<20)
		return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("(*ConnPool).tryDial"))
	})
}
