package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/duration"
)

// heldStats reports how long locks have been held, from their holder records: a renewer keeps a
// zombie holder's TTL healthy and its idle time short, so only the age of the hold itself shows
// a lock held for hours after its work stalled. Only namespaces that declare ExpectedMaxHold
// are read (a GET per key), so only they have these series.
type heldStats struct {
	heldMax, held *prometheus.Desc
}

func newHeldStats() *heldStats {
	return &heldStats{
		heldMax: namespaceDesc("lock_key_held_max_seconds",
			"Longest hold among the namespace's locks whose holder record ({L}:holder, lease Policy.RecordHolder) carries the acquisition time, by the Redis server's clock; 0 when none does. Only for namespaces that declare expected_max_hold."),
		held: prometheus.NewDesc("lock_key_held_seconds",
			"Hold age of the namespace's longest-held locks only (top K, bounded cardinality; same key label rules as lock_key_idle_seconds), by the Redis server's clock. Only for namespaces that declare expected_max_hold.",
			[]string{nsLabel, "key"}, nil),
	}
}

func (d *heldStats) describe(ch chan<- *prometheus.Desc) {
	ch <- d.heldMax
	ch <- d.held
}

func (d *heldStats) update(res *Result, ch chan<- prometheus.Metric) {
	for ns := range res.knownNamespaces() {
		if ns.Namespace.ExpectedMaxHold <= 0 {
			continue
		}
		name := ns.Namespace.Name
		ch <- gauge(d.heldMax, duration.Seconds(ns.MaxHeld), name) // MaxHeld is 0 unless HasHeld
		seen := make(map[string]bool, len(ns.LongestHeld))
		for _, k := range ns.LongestHeld {
			if !seen[k.Label] {
				seen[k.Label] = true
				ch <- gauge(d.held, duration.Seconds(k.Held), name, k.Label)
			}
		}
	}
}
