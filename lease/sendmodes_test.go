package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// A paused Redis makes each renew time out; the Abandon policy abandons after exactly
// MaxRenewFailures consecutive ones, in both modes. The abandonment's log line is the record of
// that count: a renew that timed out on a starved machine before the pause is counted as
// failed too, but a success followed it.
func TestFenceAbandonsAfterExactlyMaxFailuresWhilePaused(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		srv := redistest.Start(t)
		renews := &faultHook{match: isScript(renewScript.Source())}
		e := newEnvMode(t, srv.Addr, single, renews)
		n := e.namespace(t, "scheduler", Policy{TTL: 10 * time.Second, RenewInterval: 50 * time.Millisecond,
			RenewTimeout: 100 * time.Millisecond, MaxRenewFailures: 3})
		l, err := n.Acquire(context.Background(), uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		srv.Pause()
		defer srv.Resume()
		waitCancelled(t, l)
		if cause := context.Cause(l.Context()); !errors.Is(cause, ErrAbandoned) {
			t.Fatalf("cause = %v, want ErrAbandoned", cause)
		}
		time.Sleep(4 * n.policy.RenewInterval)
		ok := e.metric(t, "lock_renewals_total", namespaceLabel, "scheduler", "outcome", "ok")
		failed := e.metric(t, "lock_renewals_total", namespaceLabel, "scheduler", "outcome", "failed")
		if got := renews.calls.Load(); float64(got) != ok+failed {
			t.Errorf("renews sent %d, want the %v that succeeded + the %v that failed: none after the abandonment", got, ok, failed)
		}
		if failed < 3 || !strings.Contains(e.logs.String(), "consecutive_failures=3 ") {
			t.Errorf("%v failed renews; want the abandonment after exactly 3 consecutive ones:\n%s", failed, e.logs.String())
		}
		e.wantMetrics(t, "scheduler", map[string]float64{
			"lock_renewals_total/not_owned": 0,
			"lock_abandoned_total":          1,
			"lock_held":                     0,
		})
		if err := l.Release(context.Background()); !errors.Is(err, ErrAbandoned) {
			t.Fatalf("Release after abandonment = %v, want ErrAbandoned", err)
		}
	})
}

// An EVALSHA of a script Redis does not have (a fresh server, SCRIPT FLUSH, a restart) is sent
// again as EVAL: on its own, and for every command of a pipeline.
func TestScriptFallback(t *testing.T) {
	eachMode(t, testScriptFallback)
}

func testScriptFallback(t *testing.T, single bool) {
	tests := []struct {
		name string
		lose func(t *testing.T, srv *redistest.Server)
	}{
		{"fresh server", func(*testing.T, *redistest.Server) {}},
		{"script flush", func(t *testing.T, srv *redistest.Server) {
			if _, err := srv.Do(context.Background(), "script", "flush"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			evals := &faultHook{match: func(args []any) bool { return len(args) > 0 && args[0] == "eval" }}
			e := newEnvMode(t, srv.Addr, single, evals)
			n := e.namespace(t, "scheduler", Policy{TTL: 10 * time.Second, Fencing: true})
			ctx := context.Background()
			const workers = 8
			leases := make([]*Lease, workers)
			acquire := func() {
				var wg sync.WaitGroup
				for i := range leases {
					wg.Go(func() {
						l, err := n.Acquire(ctx, uniqueKey(t))
						if err != nil {
							t.Errorf("Acquire: %v", err)
							return
						}
						leases[i] = l
					})
				}
				wg.Wait()
			}
			if tc.name != "fresh server" {
				acquire()
				for _, l := range leases {
					if l != nil {
						_ = l.Release(ctx)
					}
				}
			}
			tc.lose(t, srv)
			evals.calls.Store(0)
			acquire()
			if t.Failed() {
				return
			}
			if evals.calls.Load() == 0 {
				t.Fatal("no EVAL sent: the scripts were not missing, the test proves nothing")
			}
			for _, l := range leases {
				if l.Fence() < 1 {
					t.Errorf("fence %d, want ≥ 1", l.Fence())
				}
			}
			var wg sync.WaitGroup
			for _, l := range leases {
				wg.Go(func() {
					if err := l.Release(ctx); err != nil {
						t.Errorf("Release: %v", err)
					}
				})
			}
			wg.Wait()
			want := float64(workers)
			if tc.name != "fresh server" {
				want *= 2
			}
			e.wantMetrics(t, "scheduler", map[string]float64{"lock_releases_total/ok": want, "lock_releases_total/error": 0})
		})
	}
}

// Many goroutines on one key: at most one holds it at a time, every attempt is counted once,
// in both modes.
func TestConcurrentTryAcquireOneKey(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		e := newEnvMode(t, sharedAddr, single)
		n := e.namespace(t, "reconciler", Policy{TTL: 10 * time.Second})
		key := uniqueKey(t)
		const workers, attempts = 16, 40
		var holders, maxHolders, acquired atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range attempts {
					l, err := n.TryAcquire(context.Background(), key)
					if errors.Is(err, ErrBusy) {
						continue
					}
					if err != nil {
						t.Errorf("TryAcquire: %v", err)
						return
					}
					acquired.Add(1)
					h := holders.Add(1)
					for m := maxHolders.Load(); h > m && !maxHolders.CompareAndSwap(m, h); m = maxHolders.Load() {
					}
					holders.Add(-1)
					if err := l.Release(context.Background()); err != nil {
						t.Errorf("Release: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if m := maxHolders.Load(); m != 1 {
			t.Errorf("at most %d holders at once, want 1", m)
		}
		got := float64(acquired.Load())
		e.wantMetrics(t, "reconciler", map[string]float64{
			"lock_acquire_wait_seconds/acquired": got,
			"lock_acquire_wait_seconds/busy":     workers*attempts - got,
			"lock_releases_total/ok":             got,
			"lock_held":                          0,
		})
	})
}

// Close leaves no goroutine behind, and every later command fails with ErrClosed, in both modes;
// a second Close does nothing.
func TestCloseStopsTheClient(t *testing.T) {
	eachMode(t, func(t *testing.T, single bool) {
		rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
		defer rdb.Close()
		ctx := context.Background()
		if err := rdb.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		before := goleak.IgnoreCurrent()
		reg := prometheus.NewRegistry()
		c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if single {
			sendAlone(c)
		}
		e := &env{reg: reg, c: c}
		n := e.namespace(t, "approval", Policy{TTL: 10 * time.Second})
		l, err := n.TryAcquire(ctx, uniqueKey(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		goleak.VerifyNone(t, before)
		if _, err := n.TryAcquire(ctx, uniqueKey(t)); !errors.Is(err, ErrClosed) {
			t.Fatalf("TryAcquire after Close = %v, want ErrClosed", err)
		}
		e.wantMetrics(t, "approval", map[string]float64{"lock_acquire_wait_seconds/error": 1, "lock_releases_total/ok": 1})
	})
}

// Leases on a real Redis Cluster, where lease sends every command alone: scripts run on the
// lock key's slot, and concurrent fenced leases over keys on every master all work.
func TestLeasesOnCluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	reg := prometheus.NewRegistry()
	c, err := New(rdb, Options{Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &env{reg: reg, c: c}
	// What is checked is that every command reaches the right node, not how fast: the bounds
	// are generous, because 24 callers' first pipelines also pay for the slot map's first load
	// and MOVED redirects, and a 50ms RenewTimeout (which also bounds FencedSet) ran out on a
	// starved machine. The background renewer stays out of the way (RenewInterval 10s).
	n := e.namespace(t, "scheduler", Policy{TTL: 30 * time.Second, RenewInterval: 10 * time.Second,
		RenewTimeout: 10 * time.Second, AcquireTimeout: 10 * time.Second, ReleaseTimeout: 10 * time.Second, Fencing: true})
	ctx := context.Background()
	const workers = 24
	masters := map[string]bool{}
	for i := range workers {
		masters[cluster.MasterFor(t, fmt.Sprintf("batch:job:%d", i)).Addr] = true
	}
	if len(masters) < 3 {
		t.Fatalf("keys cover %d masters, want 3", len(masters))
	}
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			key := fmt.Sprintf("batch:job:%d", i)
			l, err := n.Acquire(ctx, key)
			if err != nil {
				t.Errorf("Acquire(%q): %v", key, err)
				return
			}
			if l.Fence() <= 0 {
				t.Errorf("fence of %q = %d, want a fence", key, l.Fence())
			}
			if _, err := n.TryAcquire(ctx, key); !errors.Is(err, ErrBusy) {
				t.Errorf("second acquire of %q = %v, want ErrBusy", key, err)
			}
			if err := l.Renew(ctx); err != nil {
				t.Errorf("Renew(%q): %v", key, err)
			}
			if err := n.FencedSet(ctx, key, l.Fence(), besideLock(key), "v", time.Minute); err != nil {
				t.Errorf("FencedSet(%q): %v", key, err)
			}
			if err := l.Release(ctx); err != nil {
				t.Errorf("Release(%q): %v", key, err)
			}
		})
	}
	wg.Wait()
	e.wantMetrics(t, "scheduler", map[string]float64{
		"lock_acquire_wait_seconds/acquired": workers,
		"lock_acquire_wait_seconds/busy":     workers,
		"lock_fenced_writes_total/applied":   workers,
		"lock_releases_total/ok":             workers,
		"lock_renewals_total/failed":         0,
		"lock_held":                          0,
	})
}
