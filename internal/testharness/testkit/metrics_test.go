package testkit

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ops_total", Help: "h"}, []string{"ns", "outcome"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wait_seconds", Help: "h"}, []string{"ns"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "held", Help: "h"})
	reg.MustRegister(c, h, g)
	c.WithLabelValues("a", "ok").Add(3)
	c.WithLabelValues("a", "failed").Add(1)
	h.WithLabelValues("a").Observe(0.1)
	h.WithLabelValues("a").Observe(0.2)
	g.Set(7)

	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ops_total", []string{"ns", "a", "outcome", "ok"}, 3},
		{"ops_total", []string{"outcome", "failed", "ns", "a"}, 1},
		{"wait_seconds", []string{"ns", "a"}, 2},
		{"held", nil, 7},
	} {
		if got := MetricValue(t, reg, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

func TestMetricValueMissingSeriesFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ops_total", Help: "h"}, []string{"ns", "outcome"})
	reg.MustRegister(c)
	c.WithLabelValues("a", "ok").Inc()
	for _, labels := range [][]string{
		{"ns", "b", "outcome", "ok"}, // no such value
		{"ns", "a"},                  // a label left out is not a wildcard
	} {
		if !fails(func(t testing.TB) { MetricValue(t, reg, "ops_total", labels...) }) {
			t.Errorf("MetricValue(ops_total%v) did not fail the test", labels)
		}
	}
}

// Gathered matches the label pairs it is given and nothing more: a label left out is a
// wildcard, a label given as "" matches a series without it.
func TestGathered(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ops_total", Help: "h"}, []string{"ns", "outcome"})
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "held", Help: "h"}, []string{"ns"})
	reg.MustRegister(c, g)
	c.WithLabelValues("a", "ok").Add(3)
	c.WithLabelValues("a", "failed").Add(1)
	c.WithLabelValues("b", "ok").Add(5)
	g.WithLabelValues("a").Set(2)
	for _, tc := range []struct {
		name   string
		labels []string
		want   []float64 // the values found, in gathering order (sorted by label values)
	}{
		{"ops_total", []string{"ns", "a", "outcome", "ok"}, []float64{3}},
		{"ops_total", []string{"ns", "a"}, []float64{1, 3}},
		{"ops_total", nil, []float64{1, 3, 5}},
		{"ops_total", []string{"ns", "c"}, nil},
		{"held", []string{"ns", "a", "outcome", ""}, []float64{2}},
		{"held", []string{"outcome", "ok"}, nil},
		{"missing", nil, nil},
	} {
		var got []float64
		for _, m := range Gathered(t, reg, tc.name, tc.labels...) {
			got = append(got, m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Gathered(%s%v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, time.Second, "third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times, want 3", n)
	}
	if !fails(func(t testing.TB) { Eventually(t, 20*time.Millisecond, "never", func() bool { return false }) }) {
		t.Error("Eventually did not fail on a condition that never holds")
	}
}

// fails runs fn with a testing.TB whose Fatalf ends fn's goroutine, as testing's does, and
// reports whether fn failed.
func fails(fn func(t testing.TB)) bool {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.failed
}

type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	runtime.Goexit()
}
