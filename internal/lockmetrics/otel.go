package lockmetrics

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the OTel instruments: the module path, as OTel
// asks of a library.
const ScopeName = "github.com/lockwatch/lockwatch"

// OTel instrument names and units. Prometheus' OTLP translation (otlptranslator with type and
// unit suffixes, the default since Prometheus 3) appends the unit ("s" → _seconds) and, for
// monotonic counters, _total; annotations in braces ("{renewal}") add nothing. The names
// therefore carry no _total, and the two histograms keep _seconds in the name because
// "lock_held" is also the gauge's name: a translator that finds the unit's word already among
// the name's tokens does not add it again. internal/lockmetrics' tests pin the result with the
// real translator.
const (
	AcquireWaitInstrument  = "lock_acquire_wait_seconds"
	RenewalsInstrument     = "lock_renewals"
	ReleasesInstrument     = "lock_releases"
	AbandonedInstrument    = "lock_abandoned"
	HeldSecondsInstrument  = "lock_held_seconds"
	HeldInstrument         = "lock_held"
	FencedWritesInstrument = "lock_fenced_writes"

	unitSeconds = "s"
)

// Instruments are the contract's families as OTel instruments, for an application that
// exports through an OTel MeterProvider instead of a Prometheus registry.
type Instruments struct {
	AcquireWait  metric.Float64Histogram
	Renewals     metric.Int64Counter
	Releases     metric.Int64Counter
	Abandoned    metric.Int64Counter
	HeldSeconds  metric.Float64Histogram
	Held         metric.Int64UpDownCounter
	FencedWrites metric.Int64Counter
}

// NewInstruments creates the instruments on mp's meter for ScopeName. It starts nothing: the
// application's MeterProvider decides where and how often the measurements go.
func NewInstruments(mp metric.MeterProvider) (*Instruments, error) {
	if mp == nil {
		return nil, fmt.Errorf("lock metrics: nil MeterProvider")
	}
	m := mp.Meter(ScopeName)
	var i Instruments
	var errs [7]error
	i.AcquireWait, errs[0] = m.Float64Histogram(AcquireWaitInstrument, metric.WithUnit(unitSeconds),
		metric.WithDescription(acquireWaitHelp), metric.WithExplicitBucketBoundaries(AcquireWaitBuckets()...))
	i.Renewals, errs[1] = m.Int64Counter(RenewalsInstrument, metric.WithUnit("{renewal}"),
		metric.WithDescription(renewalsHelp))
	i.Releases, errs[2] = m.Int64Counter(ReleasesInstrument, metric.WithUnit("{release}"),
		metric.WithDescription(releasesHelp))
	i.Abandoned, errs[3] = m.Int64Counter(AbandonedInstrument, metric.WithUnit("{lease}"),
		metric.WithDescription(abandonedHelp))
	i.HeldSeconds, errs[4] = m.Float64Histogram(HeldSecondsInstrument, metric.WithUnit(unitSeconds),
		metric.WithDescription(heldSecondsHelp), metric.WithExplicitBucketBoundaries(HeldSecondsBuckets()...))
	// An up-down counter, not a gauge: the library adds and removes leases, it never knows the
	// process-wide total to set. Its non-monotonic sum becomes a Prometheus gauge.
	i.Held, errs[5] = m.Int64UpDownCounter(HeldInstrument, metric.WithUnit("{lease}"),
		metric.WithDescription(heldHelp))
	i.FencedWrites, errs[6] = m.Int64Counter(FencedWritesInstrument, metric.WithUnit("{write}"),
		metric.WithDescription(fencedWritesHelp))
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("lock metrics: create OTel instruments: %w", err)
		}
	}
	return &i, nil
}

// Observer, Counter and Gauge are what a producer does with one series. client_golang's
// children (prometheus.Observer, prometheus.Counter, prometheus.Gauge) satisfy them, and so do
// the OTel series below, so a producer's hot path is written once for both.
type (
	Observer interface{ Observe(float64) }
	Counter  interface{ Inc() }
	Gauge    interface {
		Inc()
		Dec()
	}
)

// Attributes are the OTel attributes of one series: lock_namespace and, when outcome is not
// empty, outcome. The set is built once, so a measurement does not sort or copy attributes.
func Attributes(namespace, outcome string) attribute.Set {
	if outcome == "" {
		return attribute.NewSet(attribute.String(NamespaceLabel, namespace))
	}
	return attribute.NewSet(attribute.String(NamespaceLabel, namespace), attribute.String("outcome", outcome))
}

// HistogramSeries is one attribute set of an OTel histogram, as an Observer.
func HistogramSeries(h metric.Float64Histogram, attrs attribute.Set) Observer {
	return otelObserver{h: h, opts: []metric.RecordOption{metric.WithAttributeSet(attrs)}}
}

// CounterSeries is one attribute set of an OTel counter, as a Counter. It adds 0 at once, so the
// series exists before its first event, as a client_golang child created with its labels does:
// rate() then counts the first increment instead of taking it as the series' start.
func CounterSeries(c metric.Int64Counter, attrs attribute.Set) Counter {
	s := otelCounter{c: c, opts: []metric.AddOption{metric.WithAttributeSet(attrs)}}
	c.Add(context.Background(), 0, s.opts...)
	return s
}

// UpDownSeries is one attribute set of an OTel up-down counter, as a Gauge; like CounterSeries
// it exists at 0 from the start.
func UpDownSeries(u metric.Int64UpDownCounter, attrs attribute.Set) Gauge {
	s := otelGauge{u: u, opts: []metric.AddOption{metric.WithAttributeSet(attrs)}}
	u.Add(context.Background(), 0, s.opts...)
	return s
}

// The series record under context.Background(): the producers' hot paths carry no context to
// the metric call, and the contract has no exemplars.
type otelObserver struct {
	h    metric.Float64Histogram
	opts []metric.RecordOption
}

func (o otelObserver) Observe(v float64) { o.h.Record(context.Background(), v, o.opts...) }

type otelCounter struct {
	c    metric.Int64Counter
	opts []metric.AddOption
}

func (o otelCounter) Inc() { o.c.Add(context.Background(), 1, o.opts...) }

type otelGauge struct {
	u    metric.Int64UpDownCounter
	opts []metric.AddOption
}

func (o otelGauge) Inc() { o.u.Add(context.Background(), 1, o.opts...) }
func (o otelGauge) Dec() { o.u.Add(context.Background(), -1, o.opts...) }
