package collectors

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// nsLabel is the lock namespace label. Not "namespace": that collides with the Kubernetes target
// label and would be renamed exported_namespace.
const nsLabel = "lock_namespace"

// concern is one group of metrics derived from a scan Result, in the manner of node_exporter's
// per-subsystem collectors.
type concern interface {
	describe(ch chan<- *prometheus.Desc)
	update(res *Result, ch chan<- prometheus.Metric)
}

func newConcerns() []concern {
	return []concern{newScrapeMeta(), newKeyStats(), newIdleStats(), newHolderInfo(), newHeldStats(), newExpectations(), newIndexStats(), newLifecycleStats()}
}

// scrape is the prometheus.Collector for one scrape: Collect runs (or joins) a scan bounded by
// the scrape's context and builds every metric fresh from its Result.
type scrape struct {
	ctx context.Context
	s   *Scanner
}

// Collector returns a collector for one scrape whose scan is bounded by ctx. Register it on a
// registry made for that scrape (the HTTP handler builds one per request), so that each scrape's
// deadline reaches the scan.
func (s *Scanner) Collector(ctx context.Context) prometheus.Collector {
	return &scrape{ctx: ctx, s: s}
}

func (c *scrape) Describe(ch chan<- *prometheus.Desc) {
	for _, sub := range c.s.subs {
		sub.describe(ch)
	}
}

func (c *scrape) Collect(ch chan<- prometheus.Metric) {
	res := c.s.Scan(c.ctx)
	for _, sub := range c.s.subs {
		sub.update(res, ch)
	}
}

// namespaceDesc describes a metric labelled by the lock namespace alone.
func namespaceDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{nsLabel}, nil)
}

func gauge(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
