package otel_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/lockwatch/lockwatch/lease"
)

// leaseEnv is a lease Client on the shared server with its own go-redis client, and either a
// registry (the client_golang path) or an OTel SDK MeterProvider read by hand.
type leaseEnv struct {
	rdb    *redis.Client
	c      *lease.Client
	reg    *prometheus.Registry
	reader *sdkmetric.ManualReader
}

func newLeaseEnv(t testing.TB, opts lease.Options) *leaseEnv {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := lease.New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &leaseEnv{rdb: rdb, c: c}
}

// newPromEnv is a Client on the client_golang path, on a registry of its own.
func newPromEnv(t testing.TB) *leaseEnv {
	t.Helper()
	reg := prometheus.NewRegistry()
	e := newLeaseEnv(t, lease.Options{Registerer: reg})
	e.reg = reg
	return e
}

// newOTelEnv is a Client whose metrics go to an OTel SDK MeterProvider read by hand.
func newOTelEnv(t testing.TB) *leaseEnv {
	t.Helper()
	mp, reader := manualProvider(t)
	e := newLeaseEnv(t, lease.Options{MeterProvider: mp})
	e.reader = reader
	return e
}

// series returns every series the reader holds, keyed as Prometheus names them after its OTLP
// translation (name{lock_namespace,outcome}).
func (e *leaseEnv) series(t testing.TB) map[string]float64 {
	t.Helper()
	return otelSeries(t, e.reader)
}

// lockStory takes n through every outcome the library counts without background timing: an
// acquire, a busy and a failed acquire, an ok, a failed and a not-owned renew, applied and
// rejected fenced writes, a not-owned, an ok and a skipped release.
func lockStory(t *testing.T, rdb *redis.Client, n, ttlHold *lease.Namespace) {
	t.Helper()
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	key := uniqueKey(t)
	data := "{" + key + "}:data" // beside the lock, in its slot
	old, err := n.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.TryAcquire(ctx, key); !errors.Is(err, lease.ErrBusy) {
		t.Fatalf("second TryAcquire: %v, want ErrBusy", err)
	}
	if _, err := n.TryAcquire(cancelled, uniqueKey(t)); err == nil {
		t.Fatal("TryAcquire under a cancelled context succeeded")
	}
	if err := old.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	// A renew past its caller's deadline failed (one the caller cancelled is not counted).
	expired, cancelExpired := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancelExpired()
	if err := old.Renew(expired); err == nil {
		t.Fatal("Renew past its deadline succeeded")
	}
	if err := n.FencedSet(ctx, key, old.Fence(), data, "old", time.Minute); err != nil {
		t.Fatal(err)
	}
	// The key expires under the old owner; a new owner takes it and writes.
	rdb.Del(ctx, key)
	if err := old.Renew(ctx); !errors.Is(err, lease.ErrNotOwned) {
		t.Fatalf("renew after expiry: %v, want ErrNotOwned", err)
	}
	next, err := n.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.FencedSet(ctx, key, next.Fence(), data, "next", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := n.FencedSet(ctx, key, old.Fence(), data, "stale", time.Minute); !errors.Is(err, lease.ErrStaleFence) {
		t.Fatalf("stale fenced write: %v, want ErrStaleFence", err)
	}
	if err := old.Release(ctx); !errors.Is(err, lease.ErrNotOwned) {
		t.Fatalf("stale release: %v, want ErrNotOwned", err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ttlHeld, err := ttlHold.TryAcquire(ctx, uniqueKey(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ttlHeld.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// The same operations through the OTel path give, after Prometheus' OTLP translation, the same
// series with the same values as through the client_golang path: every counter and gauge,
// and every histogram's count. Histogram series the client_golang path creates at zero appear
// with OTel at their first observation; no other difference is allowed.
func TestLeaseOTelAndPrometheusPathsRecordTheSameSeries(t *testing.T) {
	prom := newPromEnv(t)
	otel := newOTelEnv(t)
	for _, c := range []*lease.Client{prom.c, otel.c} {
		n, err := c.Declare("scheduler", lease.Policy{DisableRenewal: true, Fencing: true})
		if err != nil {
			t.Fatal(err)
		}
		ttlHold, err := c.Declare("ttlhold", lease.Policy{DisableRenewal: true, ReleaseMode: lease.HoldUntilExpiry})
		if err != nil {
			t.Fatal(err)
		}
		lockStory(t, prom.rdb, n, ttlHold)
	}
	// The two stories ran at different times: their durations, so histogram sums and buckets,
	// differ; what they counted may not.
	got := counts(otel.series(t))
	compare(t, counts(promSeries(t, prom.reg)), got)
	// The story must have reached every outcome, or the comparison proves less than it says.
	for _, key := range []string{
		"lock_acquire_wait_seconds{scheduler,acquired} count", "lock_acquire_wait_seconds{scheduler,busy} count", "lock_acquire_wait_seconds{scheduler,error} count",
		"lock_renewals_total{scheduler,ok}", "lock_renewals_total{scheduler,failed}", "lock_renewals_total{scheduler,not_owned}",
		"lock_releases_total{scheduler,ok}", "lock_releases_total{scheduler,not_owned}", "lock_releases_total{ttlhold,skipped}",
		"lock_fenced_writes_total{scheduler,applied}", "lock_fenced_writes_total{scheduler,rejected}", "lock_held_seconds{scheduler,} count",
	} {
		if got[key] == 0 {
			t.Errorf("%s stayed 0: the story missed an outcome (OTel series %v)", key, slices.Sorted(maps.Keys(got)))
		}
	}
	if got["lock_held{scheduler,}"] != 0 || got["lock_held{ttlhold,}"] != 0 {
		t.Errorf("lock_held after every lease ended: %v, %v", got["lock_held{scheduler,}"], got["lock_held{ttlhold,}"])
	}
}

// Declaring a namespace on the OTel path creates its counters and gauge at zero, as on the
// client_golang path, so rate() counts the first event; closing the Client stops them.
func TestLeaseOTelNamespaceDeclarationCreatesCountersAtZero(t *testing.T) {
	e := newOTelEnv(t)
	if _, err := e.c.Declare("approval", lease.Policy{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"lock_renewals_total{approval,ok}": 0, "lock_renewals_total{approval,failed}": 0, "lock_renewals_total{approval,not_owned}": 0,
		"lock_releases_total{approval,ok}": 0, "lock_releases_total{approval,not_owned}": 0,
		"lock_releases_total{approval,error}": 0, "lock_releases_total{approval,skipped}": 0,
		"lock_abandoned_total{approval,}": 0, "lock_held{approval,}": 0,
		"lock_fenced_writes_total{approval,applied}": 0, "lock_fenced_writes_total{approval,rejected}": 0,
		"lock_waiters{approval,}": 0, "lock_held_oldest_seconds{approval,}": 0, "lock_max_hold_exceeded_total{approval,}": 0,
	}
	if got := e.series(t); !maps.Equal(got, want) {
		t.Errorf("after declaring the namespace:\n got %v\nwant %v", got, want)
	}
	// Close unregisters the Client's callback: a dropped Client is not reported forever.
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.series(t); len(got) != 0 {
		t.Errorf("after Close: %v, want no series", got)
	}
}

func TestLeaseNewRejectsBothMetricsPaths(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	mp := sdkmetric.NewMeterProvider()
	defer func() { _ = mp.Shutdown(context.Background()) }()
	_, err := lease.New(rdb, lease.Options{Registerer: prometheus.NewRegistry(), MeterProvider: mp})
	if !errors.Is(err, lease.ErrInvalidPolicy) {
		t.Fatalf("New with a Registerer and a MeterProvider: %v, want ErrInvalidPolicy", err)
	}
}
