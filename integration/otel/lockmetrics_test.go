package otel_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/lockwatch/lockwatch/internal/lockmetrics"
)

// family is what Prometheus stores of one metric family: the name, the type, the label names
// and (for histograms) the bucket bounds. Both paths are reduced to it and compared.
type family struct {
	typ     string
	labels  string // sorted, comma-separated
	buckets string // the bounds, comma-separated; empty for non-histograms
	help    string
}

// contract is the metric contract of the library half (docs/metrics.md), written out so that a
// change of names on both paths at once still fails here.
func contract() map[string]string {
	return map[string]string{
		"lock_acquire_wait_seconds": "HISTOGRAM",
		"lock_renewals_total":       "COUNTER",
		"lock_releases_total":       "COUNTER",
		"lock_abandoned_total":      "COUNTER",
		"lock_held_seconds":         "HISTOGRAM",
		"lock_held":                 "GAUGE",
		"lock_fenced_writes_total":  "COUNTER",
	}
}

// recorder records one event on every series of one namespace, through either path.
type recorder struct {
	observer func(family, outcome string) lockmetrics.Observer
	counter  func(family, outcome string) lockmetrics.Counter
	gauge    func(family string) lockmetrics.Gauge
}

func (r recorder) recordAll() {
	for _, o := range []string{lockmetrics.OutcomeAcquired, lockmetrics.OutcomeBusy, lockmetrics.OutcomeError} {
		r.observer("acquire_wait", o).Observe(0.003)
	}
	for _, o := range []string{lockmetrics.OutcomeOK, lockmetrics.OutcomeFailed, lockmetrics.OutcomeNotOwned} {
		r.counter("renewals", o).Inc()
	}
	for _, o := range []string{lockmetrics.OutcomeOK, lockmetrics.OutcomeNotOwned, lockmetrics.OutcomeError, lockmetrics.OutcomeSkipped} {
		r.counter("releases", o).Inc()
	}
	r.counter("abandoned", "").Inc()
	r.observer("held_seconds", "").Observe(12)
	r.gauge("held").Inc()
	for _, o := range []string{lockmetrics.OutcomeApplied, lockmetrics.OutcomeRejected} {
		r.counter("fenced_writes", o).Inc()
	}
}

func labelValues(ns, outcome string) []string {
	if outcome == "" {
		return []string{ns}
	}
	return []string{ns, outcome}
}

// promFamilies records on client_golang families and returns what a scrape of them holds.
func promFamilies(t *testing.T) map[string]family {
	t.Helper()
	reg := prometheus.NewRegistry()
	f, err := lockmetrics.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	histograms := map[string]*prometheus.HistogramVec{"acquire_wait": f.AcquireWait.HistogramVec, "held_seconds": f.HeldSeconds.HistogramVec}
	counters := map[string]*prometheus.CounterVec{"renewals": f.Renewals.CounterVec, "releases": f.Releases.CounterVec, "abandoned": f.Abandoned, "fenced_writes": f.FencedWrites}
	recorder{
		observer: func(fam, o string) lockmetrics.Observer {
			return histograms[fam].WithLabelValues(labelValues("ns", o)...)
		},
		counter: func(fam, o string) lockmetrics.Counter { return counters[fam].WithLabelValues(labelValues("ns", o)...) },
		gauge:   func(string) lockmetrics.Gauge { return f.Held.WithLabelValues("ns") },
	}.recordAll()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]family)
	for _, mf := range mfs {
		fam := family{typ: mf.GetType().String(), help: mf.GetHelp()}
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				var bounds []string
				for _, b := range m.GetHistogram().GetBucket() {
					bounds = append(bounds, formatBound(b.GetUpperBound()))
				}
				fam.buckets = strings.Join(bounds, ",")
			}
		}
		fam.labels = strings.Join(slices.Sorted(maps.Keys(labels)), ",")
		out[mf.GetName()] = fam
	}
	return out
}

// otelFamilies records on the OTel instruments and returns what Prometheus' OTLP receiver makes
// of them: the names and label names through the real otlptranslator with strategy, the types
// as the receiver maps them (monotonic sum → counter, non-monotonic sum → gauge).
func otelFamilies(t *testing.T, strategy otlptranslator.TranslationStrategyOption) map[string]family {
	t.Helper()
	rm := collectOTel(t, func(i *lockmetrics.Instruments) {
		histograms := map[string]metric.Float64Histogram{"acquire_wait": i.AcquireWait, "held_seconds": i.HeldSeconds}
		counters := map[string]metric.Int64ObservableCounter{"renewals": i.Renewals, "releases": i.Releases, "abandoned": i.Abandoned, "fenced_writes": i.FencedWrites}
		recorder{
			observer: func(fam, o string) lockmetrics.Observer {
				return lockmetrics.HistogramSeries(histograms[fam], lockmetrics.Attributes("ns", o))
			},
			counter: func(fam, o string) lockmetrics.Counter {
				return i.Counter(counters[fam], lockmetrics.Attributes("ns", o))
			},
			gauge: func(string) lockmetrics.Gauge { return i.UpDown(i.Held, lockmetrics.Attributes("ns", "")) },
		}.recordAll()
	})
	namer := otlptranslator.NewMetricNamer("", strategy)
	labelNamer := otlptranslator.LabelNamer{UTF8Allowed: !strategy.ShouldEscape()}
	out := make(map[string]family)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != lockmetrics.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, lockmetrics.ScopeName)
		}
		for _, m := range sm.Metrics {
			typ, otype, keys, bounds := describe(t, m.Data)
			name, err := namer.Build(otlptranslator.Metric{Name: m.Name, Unit: m.Unit, Type: otype})
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			labels := make([]string, 0, len(keys))
			for _, k := range keys {
				l, err := labelNamer.Build(k)
				if err != nil {
					t.Fatalf("%s attribute %q: %v", m.Name, k, err)
				}
				labels = append(labels, l)
			}
			slices.Sort(labels)
			out[name] = family{typ: typ, labels: strings.Join(labels, ","), buckets: bounds, help: m.Description}
		}
	}
	return out
}

// describe returns the Prometheus type, the otlptranslator type, the attribute keys and the
// histogram bounds of one OTel metric's data.
func describe(t *testing.T, data metricdata.Aggregation) (typ string, otype otlptranslator.MetricType, keys []string, bounds string) {
	t.Helper()
	keySet := map[string]bool{}
	addKeys := func(s attribute.Set) {
		for _, kv := range s.ToSlice() {
			keySet[string(kv.Key)] = true
		}
	}
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			addKeys(dp.Attributes)
		}
		if d.Temporality != metricdata.CumulativeTemporality {
			t.Errorf("temporality %v: Prometheus' OTLP receiver wants cumulative sums", d.Temporality)
		}
		typ, otype = "GAUGE", otlptranslator.MetricTypeNonMonotonicCounter
		if d.IsMonotonic {
			typ, otype = "COUNTER", otlptranslator.MetricTypeMonotonicCounter
		}
	case metricdata.Histogram[float64]:
		typ, otype = "HISTOGRAM", otlptranslator.MetricTypeHistogram
		for _, dp := range d.DataPoints {
			addKeys(dp.Attributes)
			var b []string
			for _, bound := range dp.Bounds {
				b = append(b, formatBound(bound))
			}
			bounds = strings.Join(b, ",")
		}
	case metricdata.Gauge[float64]:
		typ, otype = "GAUGE", otlptranslator.MetricTypeGauge
		for _, dp := range d.DataPoints {
			addKeys(dp.Attributes)
		}
	default:
		t.Fatalf("unexpected aggregation %T", data)
	}
	return typ, otype, slices.Sorted(maps.Keys(keySet)), bounds
}

// TestLockmetricsOTelTranslatesToContract pins the OTel instruments' names, units, kinds, attributes and
// buckets: through Prometheus' OTLP translation they must give exactly the families (names,
// types, label names, buckets, help) that the client_golang path registers, and those must be
// the contract.
func TestLockmetricsOTelTranslatesToContract(t *testing.T) {
	prom := promFamilies(t)
	for name, typ := range contract() {
		if prom[name].typ != typ {
			t.Errorf("client_golang %s: type %q, want %s", name, prom[name].typ, typ)
		}
	}
	if len(prom) != len(contract()) {
		t.Errorf("client_golang registers %d families, the contract has %d", len(prom), len(contract()))
	}
	for _, strategy := range []otlptranslator.TranslationStrategyOption{
		otlptranslator.UnderscoreEscapingWithSuffixes, // Prometheus 3's default
		otlptranslator.NoUTF8EscapingWithSuffixes,
	} {
		t.Run(string(strategy), func(t *testing.T) {
			otel := otelFamilies(t, strategy)
			for name, want := range prom {
				got, ok := otel[name]
				if !ok {
					t.Errorf("%s: no OTel instrument translates to it (got %v)", name, slices.Sorted(maps.Keys(otel)))
					continue
				}
				if got != want {
					t.Errorf("%s:\n OTel        %+v\n client_golang %+v", name, got, want)
				}
			}
			if len(otel) != len(prom) {
				t.Errorf("OTel gives %d families, client_golang %d: %v", len(otel), len(prom), slices.Sorted(maps.Keys(otel)))
			}
		})
	}
}

// A bound counter or up-down series exists at 0 before its first event, as a client_golang
// child does; the series then count what is recorded.
func TestLockmetricsOTelSeriesStartAtZeroAndCount(t *testing.T) {
	values := func(rm metricdata.ResourceMetrics) map[string]int64 {
		out := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
					for _, dp := range sum.DataPoints {
						o, _ := dp.Attributes.Value("outcome")
						out[m.Name+"/"+o.AsString()] += dp.Value
					}
				}
			}
		}
		return out
	}
	var renewOK, renewFailed lockmetrics.Counter
	var held lockmetrics.Gauge
	mp, reader := manualProvider(t)
	i, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		t.Fatal(err)
	}
	renewOK = i.Counter(i.Renewals, lockmetrics.Attributes("ns", lockmetrics.OutcomeOK))
	renewFailed = i.Counter(i.Renewals, lockmetrics.Attributes("ns", lockmetrics.OutcomeFailed))
	held = i.UpDown(i.Held, lockmetrics.Attributes("ns", ""))
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"lock_renewals/ok": 0, "lock_renewals/failed": 0, "lock_held/": 0}
	if got := values(rm); !maps.Equal(got, want) {
		t.Fatalf("before any event: %v, want %v", got, want)
	}
	renewOK.Inc()
	renewOK.Inc()
	renewFailed.Inc()
	held.Inc()
	held.Inc()
	held.Dec()
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want = map[string]int64{"lock_renewals/ok": 2, "lock_renewals/failed": 1, "lock_held/": 1}
	if got := values(rm); !maps.Equal(got, want) {
		t.Fatalf("after events: %v, want %v", got, want)
	}
}

// collectOTel creates the instruments on an SDK MeterProvider with a manual reader, lets record
// use them, and returns one collection.
func collectOTel(t *testing.T, record func(*lockmetrics.Instruments)) metricdata.ResourceMetrics {
	t.Helper()
	mp, reader := manualProvider(t)
	i, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		t.Fatal(err)
	}
	record(i)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// Two producers on one provider (two lease Clients) that count the same namespace add up, as
// two Clients on one Prometheus registry share a child; after Close a producer's series are no
// longer reported.
func TestLockmetricsOTelProducersShareAProviderAndClose(t *testing.T) {
	mp, reader := manualProvider(t)
	renewals := func() (int64, bool) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == lockmetrics.RenewalsInstrument {
					for _, dp := range sum.DataPoints {
						return dp.Value, true
					}
				}
			}
		}
		return 0, false
	}
	a, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lockmetrics.NewInstruments(mp)
	if err != nil {
		t.Fatal(err)
	}
	a.Counter(a.Renewals, lockmetrics.Attributes("ns", lockmetrics.OutcomeOK)).Inc()
	bOK := b.Counter(b.Renewals, lockmetrics.Attributes("ns", lockmetrics.OutcomeOK))
	bOK.Inc()
	bOK.Inc()
	if got, _ := renewals(); got != 3 {
		t.Fatalf("two producers: lock_renewals{ns,ok} = %d, want 3", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := renewals(); got != 2 {
		t.Fatalf("after the first producer closed: %d, want 2", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, ok := renewals(); ok {
		t.Fatalf("after both closed: still reported (%d)", got)
	}
}

// OnCollect's function runs before the observable series are read, so what it changes (and
// what it records on a histogram) is in the same collection, not the next one.
func TestLockmetricsOTelOnCollectRunsBeforeTheSeriesAreRead(t *testing.T) {
	var held lockmetrics.Gauge
	var calls int
	rm := collectOTel(t, func(i *lockmetrics.Instruments) {
		held = i.UpDown(i.Held, lockmetrics.Attributes("ns", ""))
		held.Inc()
		wait := lockmetrics.HistogramSeries(i.AcquireWait, lockmetrics.Attributes("ns", lockmetrics.OutcomeBusy))
		i.OnCollect(func() {
			calls++
			held.Dec()
			wait.Observe(2)
		})
	})
	if calls != 1 {
		t.Fatalf("OnCollect ran %d times in one collection, want 1", calls)
	}
	var heldValue, waits int64 = -1, -1
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == lockmetrics.HeldInstrument && len(d.DataPoints) == 1 {
					heldValue = d.DataPoints[0].Value
				}
			case metricdata.Histogram[float64]:
				if m.Name == lockmetrics.AcquireWaitInstrument && len(d.DataPoints) == 1 {
					waits = int64(d.DataPoints[0].Count)
				}
			}
		}
	}
	if heldValue != 0 || waits != 1 {
		t.Errorf("lock_held %d and busy waits %d in the collection, want 0 and 1: OnCollect's changes came too late", heldValue, waits)
	}
}
