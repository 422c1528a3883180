package drills

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/redisproc"
	"github.com/lockwatch/lockwatch/internal/testharness/faultproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// checkLeaks is deferred right after the servers of a drill are started: every goroutine the
// drill starts afterwards (renewers, proxies, clients, exporters) must be gone when it ends.
func checkLeaks(t *testing.T) func() {
	t.Helper()
	before := goleak.IgnoreCurrent()
	return func() {
		t.Helper()
		// A Restart starts a new redis-server, whose reaper lives until the test's cleanup,
		// after this check.
		opts := []goleak.Option{before, goleak.IgnoreAnyFunction(redisproc.ReaperFunction)}
		// go-redis ends a background re-dial to a dead node only after its one-second
		// back-off, even once its client is closed: give stragglers up to 5s to finish.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if goleak.Find(opts...) == nil {
				return
			}
		}
		goleak.VerifyNone(t, opts...)
	}
}

// worker is one process's view of Redis: its own go-redis client (through a fault proxy when
// proxied), its own registry and logger, and a lease Client on them.
type worker struct {
	name  string
	rdb   *redis.Client
	proxy *faultproxy.Proxy
	reg   *prometheus.Registry
	logs  *testkit.SyncBuffer
	c     *lease.Client
}

// newWorker starts a worker on addr; with proxied it talks to Redis through its own fault
// proxy. The audit watches its logs and metrics for tokens.
func newWorker(t *testing.T, a *audit, name, addr string, proxied bool) *worker {
	t.Helper()
	reg := prometheus.NewRegistry()
	a.watchRegistry(name+" metrics", reg)
	return newWorkerOn(t, a, name, addr, proxied, reg)
}

// newWorkerOn is newWorker with metrics on reg, which several workers may share (the caller
// has the audit watch it).
func newWorkerOn(t *testing.T, a *audit, name, addr string, proxied bool, reg *prometheus.Registry) *worker {
	t.Helper()
	w := &worker{name: name, reg: reg, logs: &testkit.SyncBuffer{}}
	if proxied {
		w.proxy = faultproxy.Start(t, addr)
		addr = w.proxy.Addr
	}
	w.rdb = redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	c, err := lease.New(w.rdb, lease.Options{Registerer: w.reg, Logger: newLogger(w.logs)})
	if err != nil {
		t.Fatalf("lease.New: %v", err)
	}
	w.c = c
	a.watchLogs(name+" log", w.logs)
	t.Cleanup(w.close)
	return w
}

func newLogger(w *testkit.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// close ends the worker's connections and proxy; drills call it before their leak check.
func (w *worker) close() {
	_ = w.rdb.Close()
	if w.proxy != nil {
		w.proxy.Close()
	}
}

func (w *worker) namespace(t *testing.T, name string, p lease.Policy) *lease.Namespace {
	t.Helper()
	n, err := w.c.Declare(name, p)
	if err != nil {
		t.Fatalf("%s: Namespace(%q): %v", w.name, name, err)
	}
	return n
}

// value returns name{lock_namespace=ns[,outcome]} from reg: a counter's or gauge's value, or a
// histogram's sample count. series is "name" or "name/outcome".
func value(t *testing.T, reg prometheus.Gatherer, ns, series string) float64 {
	t.Helper()
	name, outcome, hasOutcome := strings.Cut(series, "/")
	labels := []string{"lock_namespace", ns}
	if hasOutcome {
		labels = append(labels, "outcome", outcome)
	}
	return testkit.MetricValue(t, reg, name, labels...)
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// bound is an expectation on one series: exactly want, or at least min when atLeast.
type bound struct {
	want    float64
	atLeast bool
}

func eq(v float64) bound      { return bound{want: v} }
func atLeast(v float64) bound { return bound{want: v, atLeast: true} }

// wantMetrics checks several series of namespace ns in reg at once.
func wantMetrics(t *testing.T, who string, reg prometheus.Gatherer, ns string, want map[string]bound) {
	t.Helper()
	for series, b := range want {
		got := value(t, reg, ns, series)
		if (b.atLeast && got < b.want) || (!b.atLeast && got != b.want) {
			op := "=="
			if b.atLeast {
				op = ">="
			}
			t.Errorf("%s: %s{lock_namespace=%q} = %v, want %s %v", who, series, ns, got, op, b.want)
		}
	}
}

// within runs fn and fails the test when it took longer than bound plus the slack stalls
// allows for the scheduling stalls measured up to fn's return: the proof that a call against a
// faulty Redis returns instead of hanging.
func within(t *testing.T, bound time.Duration, stalls *testkit.StallMeter, what string, fn func()) time.Duration {
	t.Helper()
	start := time.Now()
	fn()
	took := time.Since(start)
	if limit := bound + stalls.Slack(time.Second); took > limit {
		t.Errorf("%s took %s, want at most %s", what, took, limit)
	}
	return took
}

var keySeq atomic.Int64

// uniqueKey names a key no other drill (or repeated run) uses.
func uniqueKey(t *testing.T, what string) string {
	return fmt.Sprintf("drill:%s:%s:%d", strings.ReplaceAll(t.Name(), "/", "-"), what, keySeq.Add(1))
}

// exposition renders reg in the Prometheus text format, as a scrape would see it.
func exposition(reg prometheus.Gatherer) (string, error) {
	families, err := reg.Gather()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// ctxFor is a context bounded by d, cancelled at test end at the latest.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
