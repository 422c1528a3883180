package collectors

import "github.com/prometheus/client_golang/prometheus"

// idleStats reports how long lock keys have gone untouched. A renewer that stalls stops touching
// its key, so the idle time of a live lock grows past its renew interval.
type idleStats struct {
	idleMax, idle *prometheus.Desc
}

func newIdleStats() *idleStats {
	return &idleStats{
		idleMax: prometheus.NewDesc("lock_key_idle_max_seconds",
			"Largest OBJECT IDLETIME (time since the key was last touched) in the namespace; one-second resolution.", []string{nsLabel}, nil),
		idle: prometheus.NewDesc("lock_key_idle_seconds",
			"OBJECT IDLETIME of the namespace's stalest keys only (top K, bounded cardinality); key is escaped to valid UTF-8 and length-capped.", []string{nsLabel, "key"}, nil),
	}
}

func (d *idleStats) describe(ch chan<- *prometheus.Desc) {
	ch <- d.idleMax
	ch <- d.idle
}

func (d *idleStats) update(res *Result, ch chan<- prometheus.Metric) {
	if !res.Up || !res.IdleTimeAvailable {
		return
	}
	for _, ns := range res.Namespaces {
		name := ns.Namespace.Name
		if ns.HasIdle {
			ch <- gauge(d.idleMax, ns.MaxIdle.Seconds(), name)
		}
		// Escaping and truncation could, in theory, map two keys to one label value; a duplicate
		// series would fail the whole gather, so the staler key wins.
		seen := make(map[string]bool, len(ns.Stalest))
		for _, k := range ns.Stalest {
			label := KeyLabel(k.Key)
			if seen[label] {
				continue
			}
			seen[label] = true
			ch <- gauge(d.idle, k.Idle.Seconds(), name, label)
		}
	}
}
