package collectors

import "github.com/prometheus/client_golang/prometheus"

// scrapeMeta reports on the scan itself: whether Redis answered, how long each namespace took,
// and whether the key cap or the deadline cut it short.
type scrapeMeta struct {
	up, duration, truncated, complete, idleAvailable *prometheus.Desc
}

func newScrapeMeta() *scrapeMeta {
	return &scrapeMeta{
		up: prometheus.NewDesc("lock_exporter_up",
			"1 when the last scrape reached every Redis node and no command failed, 0 otherwise.", nil, nil),
		duration: prometheus.NewDesc("lock_exporter_scrape_duration_seconds",
			"Time the namespace's scan took, or ran until the scrape deadline cut it.", []string{nsLabel}, nil),
		truncated: prometheus.NewDesc("lock_exporter_keys_truncated",
			"1 when the per-namespace key cap stopped the scan; the other metrics then cover the keys seen.", []string{nsLabel}, nil),
		complete: prometheus.NewDesc("lock_exporter_scrape_complete",
			"1 when the namespace's scan finished (or reached the key cap), 0 when the deadline or an error cut it short.", []string{nsLabel}, nil),
		idleAvailable: prometheus.NewDesc("lock_exporter_idle_time_available",
			"1 when OBJECT IDLETIME works on every node; 0 under an LFU maxmemory-policy, where idle time is not tracked and the idle metrics are absent.", nil, nil),
	}
}

func (m *scrapeMeta) describe(ch chan<- *prometheus.Desc) {
	ch <- m.up
	ch <- m.duration
	ch <- m.truncated
	ch <- m.complete
	ch <- m.idleAvailable
}

func (m *scrapeMeta) update(res *Result, ch chan<- prometheus.Metric) {
	ch <- gauge(m.up, boolGauge(res.Up))
	for _, ns := range res.Namespaces {
		name := ns.Namespace.Name
		ch <- gauge(m.duration, ns.Duration.Seconds(), name)
		ch <- gauge(m.truncated, boolGauge(ns.Truncated), name)
		ch <- gauge(m.complete, boolGauge(ns.Complete), name)
	}
	if res.Up {
		ch <- gauge(m.idleAvailable, boolGauge(res.IdleTimeAvailable))
	}
}
