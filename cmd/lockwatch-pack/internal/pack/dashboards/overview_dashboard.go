package dashboards

import (
	"fmt"
	"strconv"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
)

// OverviewUID is the stable uid of the overview dashboard; links and
// bookmarks depend on it.
const OverviewUID = "lockwatch-overview"

// overview is laid out top-down in the order an on-call engineer asks
// questions: is anything wrong, is acquiring slow, are renewals failing, is
// ownership being violated, do locks of any client lapse and get taken over,
// and what does Redis itself hold right now.
func overview(s settings) *dashboard.DashboardBuilder {
	d := base(s, OverviewUID, "Lockwatch / Overview",
		"Health of Redis lease locks per lock namespace: acquisition, renewal, ownership and the live keys in Redis. "+
			"Lockwatch / Instances breaks the same signals down per process.", true)
	healthRow(d, s)
	acquisitionRow(d, s)
	renewalRow(d, s)
	ownershipRow(d, s)
	lifecycleRow(d, s)
	storeRow(d, s)
	return d
}

// ruleSeries reads a recording rule for the selected jobs and namespaces.
func ruleSeries(s settings, record string) string {
	return record + s.selectors.rule()
}

// perJobNamespace labels recording-rule series, which exist once per job and
// namespace.
const perJobNamespace = "{{lock_namespace}} ({{job}})"

// healthRow answers "is anything wrong?" at a glance: the headline numbers,
// then the lockwatch alerts firing now.
func healthRow(d *dashboard.DashboardBuilder, s settings) {
	d.WithRow(dashboard.NewRowBuilder("Health summary"))
	healthStats(d, s)
	firingAlerts(d, s)
}

func healthStats(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithPanel(single("Locks held",
		"Leases the selected processes hold right now, summed over namespaces. Zero while work is expected usually means workers cannot acquire.",
		unitCount,
		series(fmt.Sprintf("sum(%s%s)", metricHeld, sel.lib()), "held")).
		ColorMode(common.BigValueColorModeNone))
	d.WithPanel(single("Abandonments in range",
		"Leases given up in the selected time range because renewals kept failing or found the lock taken by someone else. Each one means a worker was stopped (fenced) in the middle of its task; anything above zero deserves a look.",
		unitCount,
		series(fmt.Sprintf("sum(increase(%s%s[$__range]))", metricAbandoned, sel.lib()), "abandoned").Instant()).
		Decimals(0).
		Thresholds(alertSteps([]level{{1, "orange"}})))
	d.WithPanel(single("Not-owned ratio (worst namespace)",
		fmt.Sprintf("Share of renewals and releases over the last %s that found the lock already owned by someone else, in the worst namespace. Colours follow the LockNotOwnedRatioHigh thresholds. No data means no renewals or releases in that window, or the recording rules are not loaded.", s.window),
		unitRatio,
		series(fmt.Sprintf("max(%s)", ruleSeries(s, rules.NotOwnedRatio(s.window))), "not owned")).
		Decimals(2).
		Thresholds(alertSteps(s.notOwned)))
	d.WithPanel(single("Keys without TTL",
		"Live lock keys in Redis that have no expiry. Such a lock is never freed if its owner dies; LockKeyWithoutTTL fires on any.",
		unitCount,
		series(fmt.Sprintf("sum(%s%s)", metricKeysWithoutTTL, sel.store()), "without TTL")).
		Thresholds(alertSteps(s.keyWithoutTTL)))
	d.WithPanel(single("Exporter up",
		"Whether every selected lock exporter reached Redis on its last scrape. DOWN means the store panels below are stale and LockExporterRedisDown fires; no data means no exporter is scraped.",
		unitCount,
		series(fmt.Sprintf("min(%s%s)", metricExporterUp, sel.exporterProcess()), "up")).
		Mappings(upDownMappings()).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Color: "red"}, {Value: cog.ToPtr(1.0), Color: "green"}})))
}

func firingAlerts(d *dashboard.DashboardBuilder, s settings) {
	d.WithPanel(single("Firing lock alerts",
		"Lockwatch alerts firing now for the selected namespaces; the table below names them.",
		unitCount,
		series(fmt.Sprintf("count(%s%s)", metricAlerts, s.selectors.alerts()), "firing")).
		// No ALERTS series means nothing fires.
		NoValue("0").
		Thresholds(alertSteps([]level{{1, "red"}})))
	d.WithPanel(labelTable("Firing lock alerts",
		"Lockwatch alerts firing now (the Prometheus ALERTS series), one row per alert and namespace. Alerts that have no namespace, such as LockExporterRedisDown, are always listed. docs/runbook.md has a section for each alert name.",
		unitCount,
		[]string{"Value", "alertstate"},
		map[string]string{"alertname": "Alert", "severity": "Severity", "lock_namespace": "Namespace", "job": "Job", "instance": "Instance"},
		"",
		instantTable(metricAlerts+s.selectors.alerts())).
		Height(alertHeight))
}

// upDownMappings shows lock_exporter_up as UP and DOWN.
func upDownMappings() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"0": {Text: cog.ToPtr("DOWN"), Color: cog.ToPtr("red")},
			"1": {Text: cog.ToPtr("UP"), Color: cog.ToPtr("green")},
		},
	}}}
}

func acquisitionRow(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithRow(dashboard.NewRowBuilder("Acquisition"))
	d.WithPanel(outcomeRates("Acquire rate by outcome",
		"Acquire calls per second by how they ended: acquired (got the lock), busy (someone else held it until the caller gave up) or error (Redis failed). A rising busy line means contention.",
		metricAcquireWait+"_count", sel))
	d.WithPanel(graph("Contention: busy share of acquires",
		"Share of acquire calls that gave up because another owner held the lock. This is where the contention is: namespaces whose workers mostly wait instead of work.",
		unitRatio,
		series(fmt.Sprintf("sum by (lock_namespace) (rate(%[1]s_count%[2]s[$__rate_interval]))\n/\n(sum by (lock_namespace) (rate(%[1]s_count%[3]s[$__rate_interval])) > 0)",
			metricAcquireWait, sel.lib(`outcome="busy"`), sel.lib()),
			"{{lock_namespace}}")))
	var quantiles []*prometheus.DataqueryBuilder
	for _, q := range rules.Quantiles() {
		quantiles = append(quantiles, series(ruleSeries(s, rules.AcquireWaitQuantile(q, s.window)), "{{lock_namespace}} "+q.Name+" ({{job}})"))
	}
	d.WithPanel(alertLine(graph("Acquire wait quantiles",
		fmt.Sprintf("How long acquire calls waited for their answer, over the last %s. p99 is what the slowest 1%% of callers wait; the dashed line is the LockWaitP99High threshold.", s.window),
		unitSeconds,
		quantiles...),
		s.waitP99))
	d.WithPanel(secondsHeatmap("Acquire wait distribution",
		"Every acquire call's wait time, bucketed. Darker cells hold more calls; a band moving up means callers wait longer. Hover a cell for its bucket and rate.",
		series(rateBy("le", metricAcquireWait+"_bucket", sel.lib()), "{{le}}")).
		Span(graphWidth))
	d.WithPanel(graph("Callers waiting",
		"Callers blocked in Acquire or Do right now, per namespace (lock_waiters, from lease, or from observe for libraries that retry with one value): their lock was busy and they have no answer yet. A level that keeps rising means work piles up behind one holder; it shows before the wait histogram does, since a wait is observed only when it ends.",
		unitCount,
		series(aggregateBy("sum", "lock_namespace", metricWaiters, sel.lib()), "{{lock_namespace}}")).
		Span(graphWidth))
}

func renewalRow(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithRow(dashboard.NewRowBuilder("Renewal"))
	d.WithPanel(outcomeRates("Renew attempts by outcome",
		"Renew attempts per second: ok (lease extended), failed (Redis error or timeout; the lease may still be ours) and not_owned (the lease had expired and someone else took it).",
		metricRenewals, sel).
		Span(thirdWidth))
	d.WithPanel(alertLine(graph("Renewal failure ratio",
		fmt.Sprintf("Share of renew attempts over the last %s that failed with a Redis error or timeout. Failures are where lock bugs start: after enough in a row the library abandons the lease. Dashed lines are the LockRenewalFailureRatioHigh thresholds (orange warning, red critical).", s.window),
		unitRatio,
		series(ruleSeries(s, rules.RenewalFailureRatio(s.window)), perJobNamespace)),
		s.renewalFailure).
		Span(thirdWidth))
	secs := int64(time.Duration(s.abandonWindow).Seconds())
	d.WithPanel(alertLine(graph(fmt.Sprintf("Abandonments per %s", s.abandonWindow),
		fmt.Sprintf("Leases abandoned in the last %s: after repeated renew failures, or a renew that found the lock taken, the library stopped renewing and cancelled the holder's work. The dashed line is the LockAbandonmentsSustained count; the alert also needs abandonments to keep happening.", s.abandonWindow),
		unitCount,
		series(fmt.Sprintf("%s * %s", ruleSeries(s, rules.AbandonedRate(s.abandonWindow)), strconv.FormatInt(secs, 10)), perJobNamespace)),
		s.abandonments).
		Span(thirdWidth))
}

func ownershipRow(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithRow(dashboard.NewRowBuilder("Ownership"))
	d.WithPanel(alertLine(graph("Not-owned ratio",
		fmt.Sprintf("Share of renewals and releases over the last %s that found the lock owned by someone else: the lease expired while its holder still worked. Dashed lines are the LockNotOwnedRatioHigh thresholds (orange warning, red critical).", s.window),
		unitRatio,
		series(ruleSeries(s, rules.NotOwnedRatio(s.window)), perJobNamespace)),
		s.notOwned).
		Span(thirdWidth))
	d.WithPanel(graph("Not-owned events by operation",
		"Renewals and releases per second that found someone else's lock. A not_owned release is a stale worker that would have dropped the new owner's lock without the compare-and-delete.",
		unitPerSec,
		series(rateBy("lock_namespace", metricRenewals, sel.lib(`outcome="not_owned"`)),
			"{{lock_namespace}} renew"),
		series(rateBy("lock_namespace", metricReleases, sel.lib(`outcome="not_owned"`)),
			"{{lock_namespace}} release")).
		Span(thirdWidth))
	d.WithPanel(outcomeRates("Releases by outcome",
		"Releases per second: ok, not_owned (lease already lost), error (Redis failed) and skipped (release deliberately not sent after an abandonment, or a lock held until its TTL runs out).",
		metricReleases, sel).
		Span(thirdWidth))
	d.WithPanel(outcomeRates("Fenced writes by outcome",
		"Writes checked against the fencing token, per second. rejected means the storage refused a write from a worker whose lease had already passed to someone else: the guard stopped a duplicate.",
		metricFencedWrites, sel))
	d.WithPanel(graph("Hold time p50 / p99",
		"How long leases are held, from acquire to their end (release, abandonment, MaxHold or expiry). A p99 close to the TTL means the work barely fits in one lease and depends on renewals.",
		unitSeconds,
		series(histogramQuantile(0.99, metricHeldSeconds, sel.lib()), "{{lock_namespace}} p99"),
		series(histogramQuantile(0.5, metricHeldSeconds, sel.lib()), "{{lock_namespace}} p50")))
}

// outcomeRates graphs a library counter's rate per namespace and outcome.
func outcomeRates(title, description, counter string, sel selectors) *timeseries.PanelBuilder {
	return graph(title, description, unitPerSec,
		series(rateBy("lock_namespace, outcome", counter, sel.lib()), "{{lock_namespace}} {{outcome}}"))
}

// storeSeries is an exporter gauge aggregated per namespace with op (sum, min, max).
func storeSeries(op, gauge string, sel selectors, legend string) *prometheus.DataqueryBuilder {
	return series(aggregateBy(op, "lock_namespace", gauge, sel.store()), legend)
}

// storeRow shows what the exporter finds in Redis itself: the live keys per
// namespace, the keys to look at by name, and how complete the scan was.
func storeRow(d *dashboard.DashboardBuilder, s settings) {
	d.WithRow(dashboard.NewRowBuilder("Store (lock exporter)"))
	keyPanels(d, s)
	keyTables(d, s)
	scanPanels(d, s)
}

func keyPanels(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithPanel(graph("Live lock keys",
		"Lock keys that exist in Redis now, per namespace, as scanned by the exporter. It counts every key matching the namespace pattern, whether taken through the library or not.",
		unitCount,
		storeSeries("sum", metricKeys, sel, "{{lock_namespace}}")).
		Span(thirdWidth))
	d.WithPanel(alertLine(graph("Keys without TTL",
		"Live lock keys with no expiry, per namespace. Such a lock never frees itself if its owner crashes; LockKeyWithoutTTL fires at the dashed line.",
		unitCount,
		storeSeries("sum", metricKeysWithoutTTL, sel, "{{lock_namespace}}")),
		s.keyWithoutTTL).
		Span(thirdWidth))
	d.WithPanel(graph("Smallest remaining TTL",
		"Shortest time-to-live left on any key of the namespace, next to the configured lease TTL (when the exporter declares it). Healthy renewals keep it well above zero; a key near zero is about to expire under its owner.",
		unitSeconds,
		storeSeries("min", metricKeyTTLMin, sel, "{{lock_namespace}} smallest TTL"),
		storeSeries("max", metricExpectedTTL, sel, "{{lock_namespace}} configured TTL")).
		Span(thirdWidth))
	d.WithPanel(idlePanel(s))
}

func keyTables(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithPanel(labelTable("Stalest keys",
		fmt.Sprintf("The %d lock keys left untouched longest across the selected namespaces. A key idle for much longer than its renew interval belongs to a holder that stopped renewing, or was written without a TTL. Holder names the process that holds the lock where its namespace records holders (lease RecordHolder); it is empty for locks taken without it or by other libraries.", s.stalestKeys),
		unitSeconds,
		nil,
		map[string]string{"lock_namespace": "Namespace", "key": "Key", "holder": "Holder", "Value": "Idle"},
		"Idle",
		instantTable(stalestWithHolder(s.stalestKeys, sel.store()))).
		Span(graphWidth))
	d.WithPanel(labelTable("Keys without TTL",
		fmt.Sprintf("The %d stalest lock keys that have no expiry, by name, across the selected namespaces (the exporter lists the K stalest per namespace). Such a lock never frees itself if its owner dies: confirm the key with lock-exporter inspect, then give it a TTL or delete it (runbook: LockKeyWithoutTTL).", s.stalestKeys),
		unitSeconds,
		nil,
		map[string]string{"lock_namespace": "Namespace", "key": "Key", "Value": "Idle"},
		"Idle",
		instantTable(fmt.Sprintf("topk(%d, max by (lock_namespace, key) (%s%s))", s.stalestKeys, metricKeyWithoutTTLIdle, sel.store()))).
		Span(graphWidth))
	d.WithPanel(labelTable("Longest holds",
		fmt.Sprintf("The %d lock keys held longest across the selected namespaces, from the acquisition time in their holder records (lease RecordHolder; only namespaces whose exporter configuration declares expected_max_hold are read). A renewer keeps a stalled holder's key fresh, so only its hold age gives it away; LockHeldTooLong fires above the declared maximum.", s.stalestKeys),
		unitSeconds,
		nil,
		map[string]string{"lock_namespace": "Namespace", "key": "Key", "Value": "Held"},
		"Held",
		instantTable(fmt.Sprintf("topk(%d, max by (lock_namespace, key) (%s%s))", s.stalestKeys, metricKeyHeld, sel.store()))).
		Span(graphWidth))
	d.WithPanel(graph("Oldest hold",
		"Age of the oldest lease held in each namespace, the oldest over the selected processes (lease and observe's lock_held_oldest_seconds), for locks of any library. It rises steadily while a holder keeps one lock; a saw-tooth is healthy work.",
		unitSeconds,
		series(aggregateBy("max", "lock_namespace", metricHeldOldest, sel.lib()), "{{lock_namespace}}")).
		Span(graphWidth))
}

func scanPanels(d *dashboard.DashboardBuilder, s settings) {
	sel := s.selectors
	d.WithPanel(graph("Exporter scan duration",
		"Time of the exporter's last pass over the keyspace. One pass (one SCAN cursor per Redis node) serves every namespace, so the namespaces show the same time. It grows with the whole keyspace, not with the number of namespaces; rising toward the scrape timeout means scans will be cut short.",
		unitSeconds,
		storeSeries("max", metricScrapeDuration, sel, "{{lock_namespace}}")))
	d.WithPanel(graph("Exporter scan coverage problems",
		"1 when the store panels miss something. truncated: the per-namespace key cap was hit (LockExporterKeysTruncated). cut short: the scan deadline expired (LockExporterScrapeIncomplete). idle time unavailable: Redis runs an LFU maxmemory-policy, so the idle panels and the stalest-keys table stay empty. Raise the cap or the deadline if the first two stay at 1.",
		unitCount,
		storeSeries("max", metricKeysTruncated, sel, "{{lock_namespace}} truncated"),
		series(fmt.Sprintf("1 - min by (lock_namespace) (%s%s)", metricScrapeComplete, sel.store()), "{{lock_namespace}} cut short"),
		series(fmt.Sprintf("1 - min(%s%s)", metricIdleAvailable, sel.exporterProcess()), "idle time unavailable")))
}

// stalestWithHolder is the stalest keys with the holder label of lock_key_holder_info joined on
// where one exists; keys without a holder series stay in the table (the "or" half). topk by key
// picks one holder should two exporters report different ones, which group_left would refuse.
func stalestWithHolder(k int, store string) string {
	stalest := fmt.Sprintf("topk(%d, max by (lock_namespace, key) (%s%s))", k, metricKeyIdle, store)
	return fmt.Sprintf("%s * on (lock_namespace, key) group_left (holder) topk by (lock_namespace, key) (1, %s%s) or on (lock_namespace, key) %s",
		stalest, metricKeyHolderInfo, store, stalest)
}

// idlePanel compares the stalest key's idle time with the line where
// LockRenewalStalled fires: factor × the namespace's declared renew interval.
func idlePanel(s settings) *timeseries.PanelBuilder {
	sel := s.selectors
	idle := storeSeries("max", metricKeyIdleMax, sel, "{{lock_namespace}} longest idle")
	if s.stallFactor == 0 {
		return graph("Longest idle key",
			"Time since the least recently touched key of each namespace was written; renewals touch it. Far above the renew interval means its holder stopped renewing.",
			unitSeconds, idle)
	}
	factor := strconv.FormatFloat(s.stallFactor, 'f', -1, 64)
	return graph("Longest idle key vs stall line",
		fmt.Sprintf("Time since the least recently touched key of each namespace was written; renewals touch it. The stall line is %s × the namespace's declared renew interval: above it, renewals have stopped and LockRenewalStalled fires.", factor),
		unitSeconds,
		idle,
		series(fmt.Sprintf("%s * max by (lock_namespace) (%s%s)", factor, metricExpectedRenewEvery, sel.store()),
			"{{lock_namespace}} stall line"))
}
