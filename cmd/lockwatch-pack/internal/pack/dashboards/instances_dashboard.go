package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// InstancesUID is the stable uid of the per-instance dashboard.
const InstancesUID = "lockwatch-instances"

// perInstance labels raw library series broken down per process.
const perInstance = "{{instance}} {{lock_namespace}}"

// instances answers the question the overview's per-namespace aggregates
// cannot: which replica is it? Every panel is built from raw per-process
// series, so the instance variable filters all of them.
func instances(s settings) *dashboard.DashboardBuilder {
	sel := s.selectors
	d := base(s, InstancesUID, "Lockwatch / Instances",
		"The lockwatch library signals broken down per process (scrape instance), to find the replica behind a namespace-level problem seen on Lockwatch / Overview.", false)

	d.WithRow(dashboard.NewRowBuilder("Lease trouble by instance"))
	d.WithPanel(graph("Renew failures by instance",
		"Failed renew attempts per second (Redis error or timeout) per process. One process far above the others points at its network path to Redis or a paused runtime, not at Redis itself.",
		unitPerSec,
		series(rateBy("instance, lock_namespace", metricRenewals, sel.lib(`outcome="failed"`)), perInstance)))
	d.WithPanel(graph("Not-owned renewals and releases by instance",
		"Renewals and releases per second that found the lock owned by someone else, per process: this process kept working after its lease had expired.",
		unitPerSec,
		series(rateBy("instance, lock_namespace", metricRenewals, sel.lib(`outcome="not_owned"`)), perInstance+" renew"),
		series(rateBy("instance, lock_namespace", metricReleases, sel.lib(`outcome="not_owned"`)), perInstance+" release")))
	d.WithPanel(graph("Abandonments by instance",
		"Leases each process abandoned per interval (repeated renew failures, or a renew that found the lock taken); each abandonment cancelled that process's work under the lock.",
		unitCount,
		series(fmt.Sprintf("sum by (instance, lock_namespace) (increase(%s%s[$__rate_interval]))", metricAbandoned, sel.lib()), perInstance)))
	d.WithPanel(graph("Fenced-write rejections by instance",
		"Writes the storage refused per second because this process's fencing token was older than the current owner's: the process acted on a lease it had lost.",
		unitPerSec,
		series(rateBy("instance, lock_namespace", metricFencedWrites, sel.lib(`outcome="rejected"`)), perInstance)))

	d.WithRow(dashboard.NewRowBuilder("Load by instance"))
	d.WithPanel(graph("Locks held by instance",
		"Leases each process holds right now. A process that holds far more than its peers, or never lets go, starves the others.",
		unitCount,
		series(aggregateBy("sum", "instance, lock_namespace", metricHeld, sel.lib()), perInstance)))
	d.WithPanel(graph("Acquire wait p99 by instance",
		"How long the slowest 1% of each process's acquire calls waited. One slow process with fast peers points at that process, not at contention.",
		unitSeconds,
		series(histogramQuantile(0.99, metricAcquireWait, sel.lib(), "instance"), perInstance)))
	d.WithPanel(graph("Acquire errors by instance",
		"Acquire calls per second that ended in a Redis error, per process.",
		unitPerSec,
		series(rateBy("instance, lock_namespace", metricAcquireWait+"_count", sel.lib(`outcome="error"`)), perInstance)))
	d.WithPanel(graph("Hold time p99 by instance",
		"How long the longest 1% of each process's leases were held, from acquire to their end (release, abandonment, MaxHold or expiry). A process near the TTL depends on every renewal succeeding.",
		unitSeconds,
		series(histogramQuantile(0.99, metricHeldSeconds, sel.lib(), "instance"), perInstance)))
	return d
}
