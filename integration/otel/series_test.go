package otel_test

// These helpers read the lock metrics back on both paths, keyed alike, so that a test can
// require the OTel path to hold what Prometheus would store of the client_golang path.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// manualProvider is an OTel SDK MeterProvider read by hand through the returned reader, shut
// down when t ends.
func manualProvider(t testing.TB) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, reader
}

// otelSeries collects reader once and returns what Prometheus' OTLP receiver would store of it,
// keyed as promSeries keys a scrape: the names through the real otlptranslator with
// Prometheus' default strategy, a counter's or gauge's value, and for a histogram its count,
// sum and cumulative bucket counts. Instruments of a scope other than the library's fail t.
func otelSeries(t testing.TB, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	namer := otlptranslator.NewMetricNamer("", otlptranslator.UnderscoreEscapingWithSuffixes)
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != lockmetrics.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, lockmetrics.ScopeName)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				var typ otlptranslator.MetricType = otlptranslator.MetricTypeNonMonotonicCounter
				if d.IsMonotonic {
					typ = otlptranslator.MetricTypeMonotonicCounter
				}
				name := translate(t, namer, m, typ)
				for _, dp := range d.DataPoints {
					out[seriesKey(t, name, dp.Attributes)] = float64(dp.Value)
				}
			case metricdata.Histogram[float64]:
				name := translate(t, namer, m, otlptranslator.MetricTypeHistogram)
				for _, dp := range d.DataPoints {
					key := seriesKey(t, name, dp.Attributes)
					out[key+" count"], out[key+" sum"] = float64(dp.Count), dp.Sum
					var cumulative uint64
					for i, bound := range dp.Bounds {
						cumulative += dp.BucketCounts[i]
						out[key+" le="+formatBound(bound)] = float64(cumulative)
					}
				}
			case metricdata.Gauge[float64]:
				name := translate(t, namer, m, otlptranslator.MetricTypeGauge)
				for _, dp := range d.DataPoints {
					out[seriesKey(t, name, dp.Attributes)] = dp.Value
				}
			default:
				t.Fatalf("%s: unexpected aggregation %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func translate(t testing.TB, namer otlptranslator.MetricNamer, m metricdata.Metrics, typ otlptranslator.MetricType) string {
	t.Helper()
	name, err := namer.Build(otlptranslator.Metric{Name: m.Name, Unit: m.Unit, Type: typ})
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	return name
}

// promSeries is otelSeries for a scrape of a client_golang gatherer.
func promSeries(t testing.TB, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var kvs []attribute.KeyValue
			for _, lp := range m.GetLabel() {
				kvs = append(kvs, attribute.String(lp.GetName(), lp.GetValue()))
			}
			key := seriesKey(t, f.GetName(), attribute.NewSet(kvs...))
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				h := m.Histogram
				out[key+" count"], out[key+" sum"] = float64(h.GetSampleCount()), h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key+" le="+formatBound(b.GetUpperBound())] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func formatBound(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// seriesKey is name{namespace,outcome}, either part empty where the series has no such label.
// A label other than the two fails t: nothing else (a lock value least of all) may become one.
func seriesKey(t testing.TB, name string, attrs attribute.Set) string {
	t.Helper()
	var ns, outcome string
	for _, kv := range attrs.ToSlice() {
		switch kv.Key {
		case lockmetrics.NamespaceLabel:
			ns = kv.Value.AsString()
		case "outcome":
			outcome = kv.Value.AsString()
		default:
			t.Errorf("%s has the label %q", name, kv.Key)
		}
	}
	return fmt.Sprintf("%s{%s,%s}", name, ns, outcome)
}

// counts keeps of series what does not depend on when the events happened: counters, gauges
// and histogram counts, without histogram sums and buckets.
func counts(series map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for key, v := range series {
		if !strings.HasSuffix(key, " sum") && !strings.Contains(key, " le=") {
			out[key] = v
		}
	}
	return out
}

// compare fails t on any difference between the two paths but one: a histogram series that
// client_golang creates at zero appears with OTel at its first observation.
func compare(t testing.TB, prom, otel map[string]float64) {
	t.Helper()
	for key, want := range prom {
		got, ok := otel[key]
		histogram := strings.Contains(key, "} ")
		if !ok && want == 0 && histogram {
			continue
		}
		if !ok || got != want {
			t.Errorf("%s: OTel %v (present %v), client_golang %v", key, got, ok, want)
		}
	}
	for key := range otel {
		if _, ok := prom[key]; !ok {
			t.Errorf("%s: OTel only", key)
		}
	}
}
