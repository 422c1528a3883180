package testkit

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// MetricValue returns the series name{labels} gathered from g: a counter's or gauge's value, or
// a histogram's sample count. labels alternate name and value and must name every label of the
// series. The test fails when no such series exists: a missing series is not a zero.
func MetricValue(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasExactLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// hasExactLabels reports whether m carries exactly the label pairs in labels.
func hasExactLabels(m *dto.Metric, labels []string) bool {
	if len(m.GetLabel()) != len(labels)/2 {
		return false
	}
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Eventually polls cond every 5ms until it holds, and fails the test when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Gathered returns the series of the family name gathered from g whose labels match labels,
// given as name, value pairs: a series without a label matches the value "". Unlike
// MetricValue it needs no exact label set and returns every match, so a test can read a
// histogram's buckets or tell a missing series from a zero.
func Gathered(t testing.TB, g prometheus.Gatherer, name string, labels ...string) []*dto.Metric {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				out = append(out, m)
			}
		}
	}
	return out
}

// hasLabels reports whether m carries the label pairs in labels, an absent label counting as "".
func hasLabels(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if have[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}
