package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/duration"
)

// scrapeMeta reports on the scan itself: whether Redis answered, how long the walk took, whether
// the key cap, the deadline or an error cut a namespace short, and how much of the keyspace the
// pass covered.
type scrapeMeta struct {
	up, duration, truncated, complete, success, idleAvailable *prometheus.Desc
	scanCalls, keysScanned, keyspace                          *prometheus.Desc
}

func newScrapeMeta() *scrapeMeta {
	return &scrapeMeta{
		up: prometheus.NewDesc("lock_exporter_up",
			"1 when the scrape reached every Redis node and SCAN worked; 0 when a node could not be reached, authenticated or scanned, or every namespace failed. A deadline that cuts the scan is not a 0 (see lock_exporter_scrape_complete).", nil, nil),
		duration: namespaceDesc("lock_exporter_scrape_duration_seconds",
			"Time the keyspace pass that served the namespace took, or ran until the scrape deadline cut it; one pass serves every namespace."),
		truncated: namespaceDesc("lock_exporter_keys_truncated",
			"1 when the per-namespace key cap stopped the scan; the other metrics then cover the keys seen."),
		complete: namespaceDesc("lock_exporter_scrape_complete",
			"1 when the namespace's scan finished (or reached the key cap), 0 when the deadline or an error cut it short; the namespace's counts are then a lower bound."),
		success: namespaceDesc("lock_exporter_scrape_success",
			"1 when every command on the namespace's keys succeeded, 0 when one failed (NOPERM, say); the namespace's other metrics are then absent."),
		scanCalls: prometheus.NewDesc("lock_exporter_scan_calls",
			"SCAN commands the scrape's keyspace pass sent, all nodes: proportional to the keyspace, independent of the number of namespaces.", nil, nil),
		keysScanned: prometheus.NewDesc("lock_exporter_keys_scanned",
			"Keys SCAN returned during the scrape's pass (after the server-side MATCH prefix and TYPE filters), all nodes.", nil, nil),
		keyspace: prometheus.NewDesc("lock_exporter_keyspace_keys",
			"DBSIZE summed over the scanned nodes when the pass started; with lock_exporter_scan_calls × the batch size it shows how far a cut pass got.", nil, nil),
		idleAvailable: prometheus.NewDesc("lock_exporter_idle_time_available",
			"1 when OBJECT IDLETIME works on every node; 0 under an LFU maxmemory-policy, where idle time is not tracked and the idle metrics are absent.", nil, nil),
	}
}

func (m *scrapeMeta) describe(ch chan<- *prometheus.Desc) {
	ch <- m.up
	ch <- m.duration
	ch <- m.truncated
	ch <- m.complete
	ch <- m.success
	ch <- m.idleAvailable
	ch <- m.scanCalls
	ch <- m.keysScanned
	ch <- m.keyspace
}

func (m *scrapeMeta) update(res *Result, ch chan<- prometheus.Metric) {
	ch <- gauge(m.up, boolGauge(res.Up))
	for _, ns := range res.Namespaces {
		name := ns.Namespace.Name
		ch <- gauge(m.duration, duration.Seconds(ns.Duration), name)
		ch <- gauge(m.truncated, boolGauge(ns.Truncated), name)
		ch <- gauge(m.complete, boolGauge(ns.Complete), name)
		ch <- gauge(m.success, boolGauge(res.Up && ns.Err == nil), name)
	}
	if res.Up {
		ch <- gauge(m.idleAvailable, boolGauge(res.IdleTimeAvailable))
		ch <- gauge(m.scanCalls, float64(res.ScanCalls))
		ch <- gauge(m.keysScanned, float64(res.KeysScanned))
		ch <- gauge(m.keyspace, float64(res.Keyspace))
	}
}
