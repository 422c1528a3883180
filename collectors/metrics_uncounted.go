package collectors

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// uncountedStats exports the last look for keys of types the namespaces do not count.
type uncountedStats struct {
	desc       *prometheus.Desc
	look       *uncountedTypes
	namespaces []Namespace
}

func newUncountedStats(look *uncountedTypes, namespaces []Namespace) *uncountedStats {
	return &uncountedStats{
		desc: prometheus.NewDesc("lock_exporter_namespace_uncounted_keys",
			"Keys the namespace's pattern matches whose Redis type the namespace does not count (its types), by type, from the exporter's last bounded look (at start, then at each backstop interval; at most 1000 keys typed per namespace and node). Non-zero usually means a missing types: [hash] (Redisson) or a pattern that also matches non-lock keys.",
			[]string{nsLabel, "type"}, nil),
		look:       look,
		namespaces: namespaces,
	}
}

func (u *uncountedStats) describe(ch chan<- *prometheus.Desc) { ch <- u.desc }

// update exports the last look's counts; it never waits on a look.
func (u *uncountedStats) update(_ *Result, ch chan<- prometheus.Metric) {
	for i, found := range u.look.lastCounts() {
		for _, typ := range slices.Sorted(maps.Keys(found)) {
			ch <- gauge(u.desc, float64(found[typ]), u.namespaces[i].Name, typ)
		}
	}
}
