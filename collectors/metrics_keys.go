package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/duration"
)

// keyStats reports how many lock keys live in each namespace and how close to expiry they are.
// Nothing is reported when Redis could not be read, or for a namespace whose commands failed: a
// missing series says "unknown", where a 0 would say "no locks".
type keyStats struct {
	keys, withoutTTL, ttlMin, fence *prometheus.Desc
}

func newKeyStats() *keyStats {
	return &keyStats{
		keys: namespaceDesc("lock_keys",
			"Live keys of the namespace's declared types (string by default) matching its pattern; fence counters excluded. A lower bound when lock_exporter_scrape_complete is 0."),
		withoutTTL: namespaceDesc("lock_keys_without_ttl",
			"Live keys of the namespace with no expiry: locks that never free themselves."),
		ttlMin: namespaceDesc("lock_key_ttl_min_seconds",
			"Smallest remaining TTL among the namespace's keys that have one; absent when none has."),
		fence: namespaceDesc("lock_fence_keys",
			"Fence and write-fence keys of the lease library ({L}:fence, {L}:writefence) whose lock key L, or the key itself, matches the namespace's pattern; not locks, not in lock_keys."),
	}
}

func (k *keyStats) describe(ch chan<- *prometheus.Desc) {
	ch <- k.keys
	ch <- k.withoutTTL
	ch <- k.ttlMin
	ch <- k.fence
}

func (k *keyStats) update(res *Result, ch chan<- prometheus.Metric) {
	for ns := range res.knownNamespaces() {
		name := ns.Namespace.Name
		ch <- gauge(k.keys, float64(ns.Keys), name)
		ch <- gauge(k.fence, float64(ns.FenceKeys), name)
		ch <- gauge(k.withoutTTL, float64(ns.KeysWithoutTTL), name)
		if ns.HasTTL {
			ch <- gauge(k.ttlMin, duration.Seconds(ns.MinTTL), name)
		}
	}
}
