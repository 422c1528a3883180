package lockmetrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OldestFunc reports the age of the oldest hold a producer has in one namespace, by the
// producer's clock, and false when it holds none. It is called at collection time, so the age
// is the age at the scrape, not at the last lock event; it must be cheap and must not block on
// Redis.
type OldestFunc func() (age time.Duration, ok bool)

// HoldAges is lock_held_oldest_seconds on a Prometheus registry: a collector that asks every
// producer bound to it (a lease Namespace, an observe namespace) for its oldest hold when the
// registry is scraped. Producers sharing a registry share it, as they share the families, and a
// namespace's series is the oldest over all of them.
type HoldAges struct {
	desc *prometheus.Desc

	mu      sync.Mutex
	order   []string                   // namespaces in the order they were bound
	sources map[string][]*oldestSource // by namespace
}

// oldestSource is one producer's OldestFunc, held by pointer so that remove finds it.
type oldestSource struct{ f OldestFunc }

func newHoldAges() *HoldAges {
	return &HoldAges{
		desc:    prometheus.NewDesc("lock_held_oldest_seconds", heldOldestHelp, []string{NamespaceLabel}, nil),
		sources: map[string][]*oldestSource{},
	}
}

// add makes ns report f's oldest hold from now on, until the returned func removes it. The
// namespace's series stays (at 0 once no producer is left), as the other families' series do.
func (h *HoldAges) add(ns string, f OldestFunc) (remove func()) {
	src := &oldestSource{f}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.sources[ns]; !ok {
		h.order = append(h.order, ns)
	}
	h.sources[ns] = append(h.sources[ns], src)
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sources[ns] = slices.DeleteFunc(h.sources[ns], func(s *oldestSource) bool { return s == src })
	}
}

// Describe implements prometheus.Collector.
func (h *HoldAges) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

// Collect implements prometheus.Collector: one series per bound namespace.
func (h *HoldAges) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ns := range h.order {
		var oldest time.Duration
		for _, src := range h.sources[ns] {
			if age, ok := src.f(); ok {
				oldest = max(oldest, age)
			}
		}
		ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, oldest.Seconds(), ns)
	}
}
