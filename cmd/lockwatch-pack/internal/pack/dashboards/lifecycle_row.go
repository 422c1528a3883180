package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// attributableEnds are the end reasons a lapse ratio divides by, as the alert does: unknown
// ends are never part of it.
const attributableEnds = "deleted|expired|evicted|overwritten"

// lifecycleRow shows what the exporter's change feed saw happen to the locks of the indexed
// namespaces, whatever client took them: holds beginning and ending and why, lapses and
// takeovers against their alerts' thresholds, how long holds last, and whether the exporter
// follows each namespace at all, so that a flat line can be told from blindness.
func lifecycleRow(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithRow(dashboard.NewRowBuilder("Lock lifecycle (lock exporter)"))
	d.WithPanel(graph("Acquisitions and ends by reason",
		"Lock holds beginning (acquired) and ending per second, per namespace, for every client that locks on the Redis (redis-py, Redisson, redlock, lease…), from the exporter's change feed; indexed namespaces only. deleted: released (or DEL) before the expiry; expired: the expiry passed under its holder, a lapse; overwritten: another holder's value replaced a live one; evicted: maxmemory; unknown: an end the feed could not attribute.",
		unitPerSec,
		series(rateBy("lock_namespace", metricKeyAcquisitions, sel.store()), "{{lock_namespace}} acquired"),
		series(rateBy("lock_namespace, reason", metricKeyEnds, sel.store()), "{{lock_namespace}} {{reason}}")))
	d.WithPanel(alertLine(graph("Lapse ratio",
		"Share of the ends the feed could attribute (deleted, expired, evicted, overwritten) that were expiries: holds that neither released nor renewed in time. Namespaces declared to end by expiry are left out. The dashed line is the LockKeyLapseRatioHigh threshold; the alert also needs its windows, its minimum of ends, and the namespace followed throughout.",
		unitRatio,
		series(lifecycleRatio(
			rateBy("lock_namespace", metricKeyEnds, sel.store(`reason="expired"`)),
			rateBy("lock_namespace", metricKeyEnds, sel.store(`reason=~"`+attributableEnds+`"`)),
			sel), "{{lock_namespace}}")),
		s.lapseRatio))
	d.WithPanel(alertLine(graph("Takeover ratio",
		"Share of acquisitions that took over a key whose previous hold had expired or been overwritten within the takeover window: a second worker ran while the first may still have worked. Namespaces declared to end by expiry are left out. The dashed line is the LockKeyTakeoverRatioHigh threshold.",
		unitRatio,
		series(lifecycleRatio(
			rateBy("lock_namespace", metricKeyTakeovers, sel.store()),
			rateBy("lock_namespace", metricKeyAcquisitions, sel.store()),
			sel), "{{lock_namespace}}")),
		s.takeoverRatio))
	d.WithPanel(graph("Lifecycle followed",
		"1 while the exporter follows every change of the namespace's keys, 0 while it cannot (walked, resyncing, feed lost or silent). While 0 the lifecycle counters stand still and the lapse and takeover alerts stay silent: no lapses then means not looking.",
		unitCount,
		series(aggregateBy("min", "lock_namespace", metricLifecycleFollowing, sel.store()), "{{lock_namespace}}")))
	d.WithPanel(secondsHeatmap("Hold duration distribution",
		"How long holds lasted when they ended, bucketed, for every client. Holds that lapse end at their lease's TTL: a band at the TTL next to expired ends means holders that do not renew, or renew too late.",
		series(rateBy("le", metricKeyHoldDuration+"_bucket", sel.store()), "{{le}}")))
}

// lifecycleRatio divides two per-namespace rates where the denominator is not 0, and leaves
// out the namespaces declared to end by expiry, whose expiries are their releases.
func lifecycleRatio(part, whole string, sel selectors) string {
	return fmt.Sprintf("(%s\n/\n(%s > 0))\nunless on (lock_namespace)\n(%s == 1)",
		part, whole, aggregateBy("max", "lock_namespace", metricEndsByExpiry, sel.store()))
}
