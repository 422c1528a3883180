package otel_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testhooks"
	"github.com/lockwatch/lockwatch/observe"
)

// otelObserver is an Observer whose metrics go to an OTel SDK MeterProvider read by hand.
type otelObserver struct {
	*observe.Observer
	reader *sdkmetric.ManualReader
}

func newOTelObserver(t *testing.T, opts observe.Options) *otelObserver {
	t.Helper()
	mp, reader := manualProvider(t)
	opts.MeterProvider = mp
	o, err := observe.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return &otelObserver{Observer: o, reader: reader}
}

// series returns what Prometheus' OTLP receiver would store of one collection, keyed as
// promSeries keys a scrape.
func (o *otelObserver) series(t *testing.T) map[string]float64 {
	t.Helper()
	return otelSeries(t, o.reader)
}

// twoPathObservers are two Observers with the same options and one manual clock, one on a
// Prometheus registry and one on an OTel MeterProvider, both hooked on every client: each
// sees every command with the same timestamps, so their series must be equal.
type twoPathObservers struct {
	prom  *observe.Observer
	reg   *prometheus.Registry
	otel  *otelObserver
	clock *fakeClock
	// hooks are the two Observers' hooks for the one Redis server of the story: every client of
	// that server shares them, since an Observer tells servers apart by their hook.
	hooks [2]redis.Hook
}

func newTwoPathObservers(t *testing.T, opts observe.Options) *twoPathObservers {
	t.Helper()
	reg := prometheus.NewRegistry()
	promOpts := opts
	promOpts.Registerer = reg
	prom, err := observe.New(promOpts)
	if err != nil {
		t.Fatal(err)
	}
	p := &twoPathObservers{prom: prom, reg: reg, otel: newOTelObserver(t, opts), clock: &fakeClock{t: time.Unix(1_700_000_000, 0)}}
	testhooks.SetObserverClock(p.prom, p.clock.now)
	testhooks.SetObserverClock(p.otel.Observer, p.clock.now)
	p.hooks = [2]redis.Hook{p.prom.Hook(), p.otel.Hook()}
	return p
}

func (p *twoPathObservers) hook(rdb *redis.Client) {
	rdb.AddHook(p.hooks[0])
	rdb.AddHook(p.hooks[1])
}

// The story below takes both Observers through every outcome the wire can show, on a real
// server: acquired, busy (given up) and failed acquires, ok, not-owned and failed renews, ok,
// not-owned and failed releases, a hold ended by a refused renew and one by a release, and a
// lock past MaxTracked. After Prometheus' OTLP translation the OTel path must hold exactly the
// Prometheus path's series, with the same values, sums and buckets.
func TestObserveOTelAndPrometheusPathsRecordTheSameSeries(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	obs := newTwoPathObservers(t, observe.Options{
		Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}, {Name: "approvals", Pattern: "approval:*"}},
		MaxTracked: 3,
	})
	rdb := srv.Client(t)
	obs.hook(rdb)
	clock := obs.clock
	release, refresh := redis.NewScript(testRelease), redis.NewScript(testRefresh)
	acquire := func(key, value string) bool {
		t.Helper()
		ok, err := rdb.SetNX(ctx, key, value, 10*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	run := func(s *redis.Script, key, value string, args ...any) int64 {
		t.Helper()
		n, err := s.Run(ctx, rdb, []string{key}, append([]any{value}, args...)...).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	steps := []struct {
		name string
		do   func() bool
	}{
		{"A acquires jobs:1", func() bool { return acquire("jobs:1", "value-A") }},
		{"B is refused", func() bool { clock.advance(100 * time.Millisecond); return !acquire("jobs:1", "value-B") }},
		{"B is refused again", func() bool { clock.advance(500 * time.Millisecond); return !acquire("jobs:1", "value-B") }},
		{"A renews", func() bool { return run(refresh, "jobs:1", "value-A", 10000) == 1 }},
		{"C's stale release is refused", func() bool { return run(release, "jobs:1", "value-C") == 0 }},
		{"A's key expires, its renew is refused", func() bool {
			clock.advance(time.Second)
			rdb.Del(ctx, "jobs:1")
			return run(refresh, "jobs:1", "value-A", 10000) == 0
		}},
		{"A's late release is refused", func() bool { return run(release, "jobs:1", "value-A") == 0 }},
		{"B acquires after waiting", func() bool { clock.advance(200 * time.Millisecond); return acquire("jobs:1", "value-B") }},
		{"D is refused once", func() bool { return !acquire("jobs:1", "value-D") }},
		{"E acquires approval:1, the third tracked lock", func() bool { return acquire("approval:1", "value-E") }},
		{"F acquires approval:2 past MaxTracked", func() bool { return acquire("approval:2", "value-F") }},
		{"E releases after D's wait is given up", func() bool {
			clock.advance(3 * time.Second)
			return run(release, "approval:1", "value-E") == 1
		}},
		{"F releases", func() bool { return run(release, "approval:2", "value-F") == 1 }},
		{"B releases", func() bool { return run(release, "jobs:1", "value-B") == 1 }},
		{"G acquires jobs:2", func() bool { return acquire("jobs:2", "value-G") }},
	}
	for _, s := range steps {
		if !s.do() {
			t.Fatalf("%s: the server did not answer as the story needs", s.name)
		}
	}
	// Past the second for which an Observer remembers what it needs of released locks and
	// failed attempts (to tell a quorum's late replies apart), so that nothing above bears on
	// the failures below.
	clock.advance(1500 * time.Millisecond)
	// Redis paused past the client's read timeout: an acquire errors, G's renew fails and its
	// release is lost in transit (G stays counted as held until its expiry).
	slow := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = slow.Close() })
	obs.hook(slow)
	if err := slow.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	defer srv.Resume()
	if err := slow.SetNX(ctx, "jobs:3", "value-H", 10*time.Second).Err(); err == nil {
		t.Fatal("acquire answered while the server was paused")
	}
	if err := refresh.EvalSha(ctx, slow, []string{"jobs:2"}, "value-G", 10000).Err(); err == nil {
		t.Fatal("renew answered while the server was paused")
	}
	if err := release.EvalSha(ctx, slow, []string{"jobs:2"}, "value-G").Err(); err == nil {
		t.Fatal("release answered while the server was paused")
	}
	srv.Resume()

	prom, otel := promSeries(t, obs.reg), obs.otel.series(t)
	compare(t, prom, otel)
	// The story must have reached every outcome, or the comparison proves less than it says.
	want := map[string]float64{
		"lock_acquire_wait_seconds{jobs,acquired} count":      3,   // A, B, G
		"lock_acquire_wait_seconds{jobs,acquired} sum":        1.7, // B waited from its first try
		"lock_acquire_wait_seconds{jobs,busy} count":          1,   // D
		"lock_acquire_wait_seconds{jobs,error} count":         1,   // H
		"lock_acquire_wait_seconds{approvals,acquired} count": 2,
		"lock_renewals_total{jobs,ok}":                        1,
		"lock_renewals_total{jobs,not_owned}":                 1,
		"lock_renewals_total{jobs,failed}":                    1,
		"lock_releases_total{jobs,ok}":                        1,
		"lock_releases_total{jobs,not_owned}":                 2,
		"lock_releases_total{jobs,error}":                     1,
		"lock_releases_total{approvals,ok}":                   2,
		"lock_held_seconds{jobs,} count":                      2, // A, B
		"lock_held_seconds{approvals,} count":                 1, // E; F was not tracked
		"lock_held{jobs,}":                                    1, // G
		"lock_held{approvals,}":                               0,
		"lock_observe_untracked_total{,}":                     1, // F
		"lock_waiters{jobs,}":                                 0, // B retried with its value: a waiter until it acquired
	}
	for key, w := range want {
		if g, ok := otel[key]; !ok || (g-w) > 1e-9 || (w-g) > 1e-9 {
			t.Errorf("OTel %s = %v (present %v), want %v", key, g, ok, w)
		}
	}
}

// New on a MeterProvider reports the same series at zero as New on a registry (histograms
// aside, which OTel has only from their first observation), and no series the wire cannot
// derive; Close stops the counters, lock_held and lock_observe_untracked.
func TestObserveOTelNewReportsTheSameZeroSeries(t *testing.T) {
	obs := newTwoPathObservers(t, observe.Options{Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	otel := obs.otel.series(t)
	compare(t, promSeries(t, obs.reg), otel)
	if len(otel) != 10 {
		t.Errorf("OTel series at start: %v, want the 6 counters, lock_held, lock_held_oldest_seconds, lock_observe_untracked_total and lock_observe_unclassified_scripts_total", slices.Sorted(maps.Keys(otel)))
	}
	for key := range otel {
		if strings.HasPrefix(key, "lock_abandoned_total") || strings.HasPrefix(key, "lock_fenced_writes_total") || strings.HasSuffix(key, ",skipped}") ||
			strings.HasPrefix(key, "lock_waiters") || strings.HasPrefix(key, "lock_max_hold_exceeded_total") {
			t.Errorf("%s reported: the wire cannot derive it", key)
		}
	}
	if err := obs.otel.Close(); err != nil {
		t.Fatal(err)
	}
	if got := obs.otel.series(t); len(got) != 0 {
		t.Errorf("after Close: %v, want no series", got)
	}
	if err := obs.otel.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A collection brings the state up to date before lock_held is read, as a scrape does on the
// Prometheus path: with no lock command after an expiry and a given-up wait, the very next
// collection shows lock_held back at 0, the hold ended at the key's deadline and the wait
// counted busy.
func TestObserveOTelCollectionSweepsExpiredState(t *testing.T) {
	o := newOTelObserver(t, observe.Options{Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	testhooks.SetObserverClock(o.Observer, clock.now)
	do(o.Observer, clock, 10*time.Millisecond, ok, "set", "jobs:1", "value-A", "nx", "px", "1000")
	do(o.Observer, clock, 10*time.Millisecond, nilReply, "set", "jobs:1", "value-B", "nx", "px", "1000")
	if got := o.series(t)["lock_held{jobs,}"]; got != 1 {
		t.Fatalf("lock_held while A holds = %v, want 1", got)
	}
	clock.advance(5 * time.Second)
	got := o.series(t)
	want := map[string]float64{
		"lock_held{jobs,}":                               0,
		"lock_held_seconds{jobs,} count":                 1,
		"lock_held_seconds{jobs,} sum":                   1.01, // from the acquire's start to the deadline its reply set
		"lock_acquire_wait_seconds{jobs,busy} count":     1,
		"lock_acquire_wait_seconds{jobs,acquired} count": 1,
	}
	for key, w := range want {
		if g, ok := got[key]; !ok || (g-w) > 1e-9 || (w-g) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", key, g, ok, w)
		}
	}
	if n := o.Tracked(); n != 0 {
		t.Errorf("%d locks still tracked after the collection, want 0", n)
	}
}

func TestObserveNewNeedsExactlyOneMetricsPath(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	nss := []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	tests := []struct {
		name string
		opts observe.Options
		want error
	}{
		{"neither", observe.Options{Namespaces: nss}, observe.ErrNoRegisterer},
		{"both", observe.Options{Registerer: prometheus.NewRegistry(), MeterProvider: mp, Namespaces: nss}, observe.ErrBothMetricsPaths},
		{"registerer", observe.Options{Registerer: prometheus.NewRegistry(), Namespaces: nss}, nil},
		{"meter provider", observe.Options{MeterProvider: mp, Namespaces: nss}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := observe.New(tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New: %v, want %v", err, tt.want)
			}
			if err == nil {
				if err := o.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
		})
	}
}

// Collections run while callers lock: the sweep inside the collection and the hook paths share
// the tracker and the SDK's aggregators without a race or a deadlock, and every cycle counts.
func TestObserveOTelCollectsWhileLocking(t *testing.T) {
	o := newOTelObserver(t, observe.Options{Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
	const workers, cycles = 4, 300
	done := make(chan struct{})
	collected := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				collected <- n
				return
			default:
				var rm metricdata.ResourceMetrics
				if err := o.reader.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
				}
				n++
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range cycles {
				key, value := fmt.Sprintf("jobs:%d:%d", w, i), fmt.Sprintf("value-%d-%d", w, i)
				o.Begin(observe.StringArgs{"set", key, value, "nx", "px", "60000"}).Done(ok)
				o.Begin(observe.StringArgs{"eval", testRelease, "1", key, value}).Done(one)
			}
		}()
	}
	wg.Wait()
	close(done)
	if n := <-collected; n == 0 {
		t.Log("no collection overlapped the cycles")
	}
	got := o.series(t)
	if got["lock_releases_total{jobs,ok}"] != workers*cycles || got["lock_acquire_wait_seconds{jobs,acquired} count"] != workers*cycles ||
		got["lock_held_seconds{jobs,} count"] != workers*cycles || got["lock_held{jobs,}"] != 0 {
		t.Errorf("after %d cycles: releases ok %v, acquires %v, holds %v, held %v", workers*cycles,
			got["lock_releases_total{jobs,ok}"], got["lock_acquire_wait_seconds{jobs,acquired} count"],
			got["lock_held_seconds{jobs,} count"], got["lock_held{jobs,}"])
	}
}
