package collectors

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
)

// lifecycleStats reports lock lifecycles of every client, derived from the change feed of the
// indexed namespaces.
type lifecycleStats struct {
	acquisitions, ends, takeovers, renewals, holds, following, endsByExpiry *prometheus.Desc
}

func newLifecycleStats() *lifecycleStats {
	return &lifecycleStats{
		acquisitions: namespaceDesc("lock_key_acquisitions_total",
			"Holds that began, from the lock-key index's change feed: a lock key appeared, or a new holder replaced its holder. Indexed namespaces only; frozen while lock_exporter_lifecycle_following is 0."),
		ends: prometheus.NewDesc("lock_key_ends_total",
			"Holds that ended, by reason: deleted (removed before its expiry), expired (its expiry passed: a lapse unless lock_exporter_lifecycle_ends_by_expiry is 1), evicted, overwritten (another holder's value replaced it while live), unknown (an end the feed cannot attribute). An expiry ends a hold when it passes, by the Redis server's clock.",
			[]string{nsLabel, "reason"}, nil),
		takeovers: namespaceDesc("lock_key_takeovers_total",
			"Acquisitions of a key within the takeover window (--scan.takeover-window, or the namespace's takeover_window) after its hold ended expired or overwritten."),
		renewals: namespaceDesc("lock_key_renewals_total",
			"A held key's expiry moved later with the same holder (the expiry an acquiring command sets is part of the acquisition)."),
		holds: namespaceDesc("lock_key_hold_duration_seconds",
			"Hold durations, observed when a hold ends (an expired hold at its expiry); holds that began before the index followed the key are not observed."),
		following: namespaceDesc("lock_exporter_lifecycle_following",
			"1 while the lifecycle counters of the namespace follow every change (served from an index current with its change feed), 0 while they cannot (walked, building or resyncing, feed lost, Redis unreachable, a Cluster slot moving between masters) and at the first scrape after a resync: nothing is counted then."),
		endsByExpiry: namespaceDesc("lock_exporter_lifecycle_ends_by_expiry",
			"1 for a namespace configured with ends_by_expiry (its holds end by expiry on purpose: expired ends are no lapses, and no takeover is counted after one), 0 otherwise."),
	}
}

func (d *lifecycleStats) describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{d.acquisitions, d.ends, d.takeovers, d.renewals, d.holds, d.following, d.endsByExpiry} {
		ch <- desc
	}
}

func (d *lifecycleStats) update(res *Result, ch chan<- prometheus.Metric) {
	if res.lifecycle == nil {
		return
	}
	for _, f := range res.lifecycle.namespaces {
		c := f.counts
		ch <- counter(d.acquisitions, c.Acquisitions, f.name)
		for r := range lifecycle.NumReasons {
			ch <- counter(d.ends, c.Ends[r], f.name, r.String())
		}
		ch <- counter(d.takeovers, c.Takeovers, f.name)
		ch <- counter(d.renewals, c.Renewals, f.name)
		ch <- prometheus.MustNewConstHistogram(d.holds, c.HoldCount, c.HoldSum, cumulative(res.lifecycle.buckets, c.HoldBuckets), f.name)
		ch <- gauge(d.following, boolGauge(f.following), f.name)
		ch <- gauge(d.endsByExpiry, boolGauge(f.endsByExpiry), f.name)
	}
}

func counter(desc *prometheus.Desc, v uint64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
}

// cumulative is a const histogram's buckets from per-bucket counts (the last, above every
// bound, is the +Inf bucket the histogram adds itself).
func cumulative(bounds []float64, counts []uint64) map[float64]uint64 {
	out := make(map[float64]uint64, len(bounds))
	var sum uint64
	for i, le := range bounds {
		sum += counts[i]
		out[le] = sum
	}
	return out
}
