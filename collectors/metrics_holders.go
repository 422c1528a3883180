package collectors

import "github.com/prometheus/client_golang/prometheus"

// holderInfo names who holds the stalest keys: one info series per key of lock_key_idle_seconds
// whose lock records a holder (lease namespaces with Policy.RecordHolder). It is a separate
// metric so that the contract metrics keep their labels, and it is bounded by the same top-K.
type holderInfo struct {
	info *prometheus.Desc
}

func newHolderInfo() *holderInfo {
	return &holderInfo{info: prometheus.NewDesc("lock_key_holder_info",
		"Constant 1 for each key of lock_key_idle_seconds whose holder key ({L}:holder of lock key L, written with Policy.RecordHolder) names its holder; key and holder are escaped and length-capped. Locks of other libraries have no holder and no series.",
		[]string{nsLabel, "key", "holder"}, nil)}
}

func (h *holderInfo) describe(ch chan<- *prometheus.Desc) { ch <- h.info }

// update follows idleStats: the same keys, in the same order, with the same de-duplication by
// label, so every series here has its lock_key_idle_seconds twin.
func (h *holderInfo) update(res *Result, ch chan<- prometheus.Metric) {
	if !res.IdleTimeAvailable {
		return
	}
	for ns := range res.knownNamespaces() {
		seen := make(map[string]bool, len(ns.Stalest))
		for _, k := range ns.Stalest {
			if seen[k.Label] {
				continue
			}
			seen[k.Label] = true
			if k.Holder != "" {
				ch <- gauge(h.info, 1, ns.Namespace.Name, k.Label, holderLabel(k.Holder))
			}
		}
	}
}

// holderLabel renders a holder description for the holder label: escaped and length-capped by
// the same rules as the key label (KeyLabel), so a hostile value cannot break the exposition
// format or grow a series without bound.
func holderLabel(holder string) string {
	return KeyLabel(holder)
}
