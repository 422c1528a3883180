package peertest

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/observe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ns is the namespace every test declares.
const ns = "jobs"

// giveUp is the observers' GiveUpAfter: short, so a given-up wait shows within a test.
const giveUp = 300 * time.Millisecond

// env is a real redis-server and an observer on a fresh registry.
type env struct {
	srv *redistest.Server
	reg *prometheus.Registry
	obs *observe.Observer
}

func newEnv(t *testing.T, pattern string) *env {
	t.Helper()
	e := &env{srv: redistest.Start(t)}
	e.observe(t, pattern)
	return e
}

// observe replaces the observer with a fresh one on a fresh registry: one that never saw a
// script body, so it must know the libraries' SHAs.
func (e *env) observe(t *testing.T, pattern string) { e.observeTB(t, pattern) }

func (e *env) observeTB(t testing.TB, pattern string) {
	t.Helper()
	e.reg = prometheus.NewRegistry()
	obs, err := observe.New(observe.Options{
		Registerer:  e.reg,
		Namespaces:  []observe.Namespace{{Name: ns, Pattern: pattern}},
		GiveUpAfter: giveUp,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.obs = obs
}

func (e *env) value(t *testing.T, name, outcome string) float64 {
	t.Helper()
	if outcome == "" {
		return testkit.MetricValue(t, e.reg, name, "lock_namespace", ns)
	}
	return testkit.MetricValue(t, e.reg, name, "lock_namespace", ns, "outcome", outcome)
}

// want checks counters, gauges and histogram counts: name{outcome} -> value.
type want struct {
	name, outcome string
	v             float64
}

func (e *env) check(t *testing.T, wants ...want) {
	t.Helper()
	for _, w := range wants {
		if got := e.value(t, w.name, w.outcome); got != w.v {
			t.Errorf("%s{outcome=%q} = %v, want %v", w.name, w.outcome, got, w.v)
		}
	}
}

func (e *env) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, what, cond)
}

// histogramSum is the sum of name{lock_namespace=jobs,outcome}.
func (e *env) histogramSum(t *testing.T, name, outcome string) float64 {
	t.Helper()
	fams, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["lock_namespace"] == ns && labels["outcome"] == outcome {
				return m.GetHistogram().GetSampleSum()
			}
		}
	}
	t.Fatalf("no histogram %s{%s}", name, outcome)
	return 0
}

// assertNoToken scrapes the registry as Prometheus would and fails when a lock value, or an
// error the library returned, leaks one.
func (e *env) assertNoToken(t *testing.T, tokens []string, errs ...error) {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if !bytes.Contains(body, []byte("lock_releases_total")) {
		t.Fatal("scrape has no lock metrics")
	}
	if len(tokens) == 0 {
		t.Fatal("token audit without tokens")
	}
	for _, tok := range tokens {
		if tok == "" {
			t.Fatal("empty token in the audit")
		}
		if bytes.Contains(body, []byte(tok)) {
			t.Fatal("scrape output contains a lock value")
		}
		for _, err := range errs {
			if err != nil && bytes.Contains([]byte(err.Error()), []byte(tok)) {
				t.Fatalf("error %q contains a lock value", err.Error())
			}
		}
	}
}
