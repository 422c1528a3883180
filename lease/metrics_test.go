package lease

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

// libraryFamilies is the metric contract of the brief's library table: name → label names.
var libraryFamilies = map[string][]string{
	"lock_acquire_wait_seconds": {"lock_namespace", "outcome"},
	"lock_renewals_total":       {"lock_namespace", "outcome"},
	"lock_releases_total":       {"lock_namespace", "outcome"},
	"lock_abandoned_total":      {"lock_namespace"},
	"lock_held_seconds":         {"lock_namespace"},
	"lock_held":                 {"lock_namespace"},
	"lock_fenced_writes_total":  {"lock_namespace", "outcome"},
}

// Declaring a namespace creates every series of the contract at zero, so that dashboards and
// alert rules find them before the first lock is taken.
func TestNamespaceDeclarationPreinitialisesEverySeries(t *testing.T) {
	e := newEnv(t, sharedAddr)
	for _, ns := range []string{"scheduler", "approval"} {
		e.namespace(t, ns, Policy{})
	}
	families, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, f := range families {
		wantLabels, ok := libraryFamilies[f.GetName()]
		if !ok {
			t.Errorf("unexpected family %s", f.GetName())
			continue
		}
		types[f.GetName()] = f.GetType().String()
		for _, m := range f.GetMetric() {
			var names []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
			}
			sort.Strings(names)
			if strings.Join(names, ",") != strings.Join(wantLabels, ",") {
				t.Errorf("%s has labels %v, want %v", f.GetName(), names, wantLabels)
			}
		}
	}
	wantTypes := map[string]string{
		"lock_acquire_wait_seconds": "HISTOGRAM", "lock_renewals_total": "COUNTER",
		"lock_releases_total": "COUNTER", "lock_abandoned_total": "COUNTER",
		"lock_held_seconds": "HISTOGRAM", "lock_held": "GAUGE", "lock_fenced_writes_total": "COUNTER",
	}
	for name, typ := range wantTypes {
		if types[name] != typ {
			t.Errorf("%s: type %q, want %s", name, types[name], typ)
		}
	}
	for _, ns := range []string{"scheduler", "approval"} {
		e.wantMetrics(t, ns, map[string]float64{
			"lock_acquire_wait_seconds/acquired": 0, "lock_acquire_wait_seconds/busy": 0, "lock_acquire_wait_seconds/error": 0,
			"lock_renewals_total/ok": 0, "lock_renewals_total/failed": 0, "lock_renewals_total/not_owned": 0,
			"lock_releases_total/ok": 0, "lock_releases_total/not_owned": 0, "lock_releases_total/error": 0, "lock_releases_total/skipped": 0,
			"lock_abandoned_total": 0, "lock_held_seconds": 0, "lock_held": 0,
			"lock_fenced_writes_total/applied": 0, "lock_fenced_writes_total/rejected": 0,
		})
	}
	if got := testutil.CollectAndCount(e.c.metrics.prom.AcquireWait); got != 6 {
		t.Errorf("lock_acquire_wait_seconds has %d series for 2 namespaces, want 6", got)
	}
}

// Test 12: the registry passes promlint after every kind of operation.
func TestRegistryPassesLint(t *testing.T) {
	e := newEnv(t, sharedAddr)
	n := e.namespace(t, "scheduler", Policy{Fencing: true})
	key := uniqueKey(t)
	l, err := n.Acquire(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = n.TryAcquire(context.Background(), key)
	_ = l.Renew(context.Background())
	_ = n.FencedSet(context.Background(), key, l.Fence(), besideLock(key), "v", time.Minute)
	_ = l.Release(context.Background())
	problems, err := testutil.GatherAndLint(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if got, err := testutil.GatherAndCount(e.reg); err != nil || got != 15 {
		t.Errorf("series after use = %d (%v), want the 15 pre-initialised ones", got, err)
	}
}

// With a nil Registerer the library runs without metrics.
func TestNilRegistererMeansNoMetrics(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	c, err := New(rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.metrics != nil {
		t.Fatal("metrics created without a registerer")
	}
	n, err := c.Declare("approval", Policy{Fencing: true, RenewInterval: 10 * time.Millisecond, RenewTimeout: time.Second, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n.m != nil {
		t.Fatal("namespace metrics created without a registerer")
	}
	key := uniqueKey(t)
	err = n.Do(context.Background(), key, func(ctx context.Context, fence int64) error {
		time.Sleep(30 * time.Millisecond) // a few renews
		// A newer fence has written: this lease's own write is stale.
		g := n.Guard(nil)
		if err := g.Set(ctx, fence+1, key+":data", "v", 0); err != nil {
			return err
		}
		return g.Set(ctx, fence, key+":data", "v", 0)
	})
	if !errors.Is(err, ErrStaleFence) {
		t.Errorf("Do = %v, want the stale write's ErrStaleFence", err)
	}
}

// Clients may share a registry; a foreign collector under one of our names is an error.
func TestRegistration(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: sharedAddr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	reg := prometheus.NewRegistry()
	a, err := New(rdb, Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(rdb, Options{Registerer: reg})
	if err != nil {
		t.Fatalf("second Client on the same registry: %v", err)
	}
	if a.metrics.prom.Held != b.metrics.prom.Held {
		t.Error("second Client did not share the registered families")
	}

	clash := prometheus.NewRegistry()
	clash.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "lock_renewals_total", Help: "not ours"}))
	if _, err := New(rdb, Options{Registerer: clash}); err == nil {
		t.Error("New registered over a foreign collector without an error")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) returned no error")
	}
}
