package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/duration"
)

// idleStats reports how long lock keys have gone untouched. A renewer that stalls stops touching
// its key, so the idle time of a live lock grows past its renew interval.
type idleStats struct {
	idleMax, idle, noTTLIdle *prometheus.Desc
}

func newIdleStats() *idleStats {
	return &idleStats{
		idleMax: namespaceDesc("lock_key_idle_max_seconds",
			"Largest OBJECT IDLETIME (time since the key was last touched) in the namespace; one-second resolution."),
		idle: prometheus.NewDesc("lock_key_idle_seconds",
			"OBJECT IDLETIME of the namespace's stalest keys only (top K, bounded cardinality); key is escaped to valid UTF-8 and length-capped.", []string{nsLabel, "key"}, nil),
		noTTLIdle: prometheus.NewDesc("lock_key_without_ttl_idle_seconds",
			"OBJECT IDLETIME of the namespace's stalest keys without expiry (top K, same key label rules as lock_key_idle_seconds): the locks that never free themselves, by name.", []string{nsLabel, "key"}, nil),
	}
}

func (d *idleStats) describe(ch chan<- *prometheus.Desc) {
	ch <- d.idleMax
	ch <- d.idle
	ch <- d.noTTLIdle
}

func (d *idleStats) update(res *Result, ch chan<- prometheus.Metric) {
	if !res.IdleTimeAvailable {
		return
	}
	for ns := range res.knownNamespaces() {
		name := ns.Namespace.Name
		if ns.HasIdle {
			ch <- gauge(d.idleMax, duration.Seconds(ns.MaxIdle), name)
		}
		perKey(d.idle, name, ns.Stalest, ch)
		perKey(d.noTTLIdle, name, ns.StalestNoTTL, ch)
	}
}

// perKey sends one series per listed key. Escaping and truncation could, in theory, map two keys
// to one label value; a duplicate series would fail the whole gather, so the staler key wins.
func perKey(desc *prometheus.Desc, namespace string, keys []KeyInfo, ch chan<- prometheus.Metric) {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k.Label] {
			continue
		}
		seen[k.Label] = true
		ch <- gauge(desc, duration.Seconds(k.Idle), namespace, k.Label)
	}
}
