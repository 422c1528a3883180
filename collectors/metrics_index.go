package collectors

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/internal/duration"
)

// indexStats reports how each namespace is read (index or walk, and why it is walked), how
// current the index served is, and how often it had to be rebuilt.
type indexStats struct {
	mode, age, resyncs, entries, corrections, backstops *prometheus.Desc
}

func newIndexStats() *indexStats {
	return &indexStats{
		mode: prometheus.NewDesc("lock_exporter_scan_mode",
			"Constant 1 for how the namespace is read: mode=\"index\" (a lock-key index kept current by Redis's client-tracking change feed, drained at scrape time) or mode=\"walk\" (a keyspace walk on every scrape); reason says why it is walked (walk_configured, no_literal_prefix, tracking_refused, key_budget, index_namespace_limit, index_unavailable, index_resync).",
			[]string{nsLabel, "mode", "reason"}, nil),
		age: namespaceDesc("lock_exporter_index_age_seconds",
			"0 when the namespace's figures are as of the change feed drained at scrape time; during a resync, the last complete index is served and this is how long ago it was last known current. Indexed namespaces only."),
		resyncs: prometheus.NewDesc("lock_exporter_index_resyncs_total",
			"Rebuilds of the lock-key index (a new change feed and one keyspace walk) since start, by reason: connection_lost, flush, redirect_broken, run_id_changed, role_changed, swapdb, stats_reset (CONFIG RESETSTAT zeroed the command counts in which SWAPDB is seen); on Redis Cluster also slots_moved (a re-read was redirected while a slot migrates, or the slots a master serves changed: that master resyncs) and topology_changed (the set of masters changed); key_budget when a namespace walked for the key budget comes back to the index.",
			[]string{"reason"}, nil),
		corrections: prometheus.NewDesc("lock_exporter_index_corrections_total",
			"Index entries the paced backstop walk found wrong and corrected since start (a key the change feed did not report): 0 with a working feed, so any increase is worth an alert.", nil, nil),
		backstops: prometheus.NewDesc("lock_exporter_index_backstop_walks_total",
			"Backstop walks of the keyspace finished since start (paced by --scan.backstop-keys-per-second).", nil, nil),
		entries: prometheus.NewDesc("lock_exporter_index_keys",
			"Keys the lock-key index holds (locks and fence keys of the indexed namespaces): at most --scan.index-key-budget.", nil, nil),
	}
}

func (d *indexStats) describe(ch chan<- *prometheus.Desc) {
	ch <- d.mode
	ch <- d.age
	ch <- d.resyncs
	ch <- d.entries
	ch <- d.corrections
	ch <- d.backstops
}

func (d *indexStats) update(res *Result, ch chan<- prometheus.Metric) {
	for _, ns := range res.Namespaces {
		if ns.Mode == "" {
			continue
		}
		ch <- gauge(d.mode, 1, ns.Namespace.Name, ns.Mode, ns.ModeReason)
		if ns.Indexed && res.Up {
			ch <- gauge(d.age, duration.Seconds(ns.IndexAge), ns.Namespace.Name)
		}
	}
	if res.IndexResyncs == nil {
		return
	}
	ch <- gauge(d.entries, float64(res.IndexEntries))
	ch <- prometheus.MustNewConstMetric(d.corrections, prometheus.CounterValue, float64(res.IndexCorrections))
	ch <- prometheus.MustNewConstMetric(d.backstops, prometheus.CounterValue, float64(res.IndexBackstops))
	reasons := []string{index.ResyncConnectionLost, index.ResyncFlush, index.ResyncRedirectBroken, index.ResyncRestart, index.ResyncRole, index.ResyncSwapDB, index.ResyncStatsReset}
	for r := range res.IndexResyncs {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	for _, r := range reasons {
		ch <- prometheus.MustNewConstMetric(d.resyncs, prometheus.CounterValue, float64(res.IndexResyncs[r]), r)
	}
}
