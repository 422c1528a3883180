package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// exporterAlerts are the alerts on the exporter's metrics, in the order they are written; a
// disabled one is left out.
func (b builder) exporterAlerts() []alertSpec {
	a := b.cfg.Alerts
	return slices.Concat(
		b.keyWithoutTTL(a.KeyWithoutTTL),
		b.renewalStalled(a.RenewalStalled),
		b.exporterRedisDown(a.ExporterRedisDown),
		b.exporterAbsent(a.ExporterAbsent),
		b.exporterScrapeIncomplete(a.ExporterScrapeIncomplete),
		b.exporterKeysTruncated(a.ExporterKeysTruncated),
		b.exporterConfigReloadFailed(a.ExporterConfigReloadFailed),
		b.heldTooLong(a.HeldTooLong),
		b.lapseRatioHigh(a.LapseRatio),
		b.takeoverRatioHigh(a.TakeoverRatio),
	)
}

// heldTooLong fires while a namespace's longest hold is above the maximum the exporter
// configuration declares for it (expected_max_hold): a "zombie" holder whose renewer keeps its
// lock alive long after its work stalled, which TTL and idle time cannot show. The hold age
// comes from the exporter (holder records, lease with RecordHolder) and from every library
// process (lock_held_oldest_seconds, lease or observe), so locks of other libraries count too;
// the two sides come from different jobs, so they meet by namespace (and cluster) only. A
// namespace without a declared maximum never matches; a hold that passes the maximum and ends
// within for: never fires.
func (b builder) heldTooLong(c packconfig.SimpleAlert) []alertSpec {
	by := "by (" + strings.Join(append(slices.Clone(b.cfg.ClusterLabels), "lock_namespace"), ", ") + ")"
	on := "on (" + strings.Join(append(slices.Clone(b.cfg.ClusterLabels), "lock_namespace"), ", ") + ")"
	return tuned(c, alertSpec{
		name: AlertHeldTooLong,
		expr: fmt.Sprintf("max %s (%s or %s) > %s max %s (%s)",
			by, b.exp("lock_key_held_max_seconds"), b.lib("lock_held_oldest_seconds"),
			on, by, b.exp("lock_expected_max_hold_seconds")),
		summary: "A lock has been held longer than its namespace allows.",
		description: fmt.Sprintf("A lock in lock namespace {{ $labels.lock_namespace }} has been held for "+
			"{{ $value | humanizeDuration }}, longer than the namespace's declared expected_max_hold, for %s: "+
			"its holder may have stalled while its renewer keeps the lock alive.", c.For),
	})
}

func (b builder) keyWithoutTTL(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name:    AlertKeyWithoutTTL,
		expr:    b.exp("lock_keys_without_ttl") + " > 0",
		summary: "Lock keys without an expiry exist.",
		description: "Lock namespace {{ $labels.lock_namespace }} has {{ $value }} live key(s) with no expiry " +
			"(exporter {{ $labels.instance }}): such a lock never frees on its own.",
	})
}

// renewalStalled compares a namespace's stalest key with its declared renew interval. Both
// series come from the same exporter target, so default matching on all labels pairs each
// namespace with its own interval.
func (b builder) renewalStalled(c packconfig.StalledAlert) []alertSpec {
	return tuned(packconfig.SimpleAlert{Disabled: c.Disabled, Severity: c.Severity, For: c.For}, alertSpec{
		name: AlertRenewalStalled,
		expr: fmt.Sprintf("%s > %s * %s", b.exp("lock_key_idle_max_seconds"),
			num(c.Factor), b.exp("lock_expected_renew_interval_seconds")),
		summary: "A lock holder stopped renewing its lease.",
		description: fmt.Sprintf("The stalest live key in lock namespace {{ $labels.lock_namespace }} "+
			"has not been renewed for {{ $value | humanizeDuration }}, more than %s times the "+
			"namespace's declared renew interval (exporter {{ $labels.instance }}).",
			num(c.Factor)),
	})
}

func (b builder) exporterRedisDown(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name:    AlertExporterRedisDown,
		expr:    b.exp("lock_exporter_up") + " == 0",
		summary: "The lock exporter cannot reach Redis.",
		description: fmt.Sprintf("lock-exporter {{ $labels.instance }} (job {{ $labels.job }}) has reported "+
			"lock_exporter_up {{ $value }} on every scrape for %s: it cannot reach Redis, and lock key "+
			"metrics are missing while that lasts.", c.For),
	})
}

func (b builder) exporterAbsent(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name:    AlertExporterAbsent,
		expr:    b.exporterAbsentExpr(),
		summary: "No lock exporter is being scraped.",
		description: fmt.Sprintf("Prometheus has had no lock_exporter_up series{{ with $labels.job }} "+
			"for job {{ . }}{{ end }} for %s: lock key metrics are missing and the other exporter "+
			"alerts cannot fire.%s", c.For, b.absentNote()),
	})
}

// exporterScrapeIncomplete fires on a namespace the scan deadline cut while Redis answered. The
// exporter also reports every namespace incomplete when Redis fails it (lock_exporter_up 0):
// without the guard a Redis outage would fire this alert once per namespace next to
// LockExporterRedisDown, and Alertmanager cannot inhibit it by namespace since the names differ.
// With up at 1 no command failed and every node answered, so an incomplete namespace was cut by
// the scan deadline, which is what this alert is about. Both series come from one target: match
// on its identity only, as the left side also carries lock_namespace.
func (b builder) exporterScrapeIncomplete(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name: AlertExporterScrapeIncomplete,
		expr: fmt.Sprintf("%s == 0 and %s %s == 1",
			b.exp("lock_exporter_scrape_complete"), b.on(), b.exp("lock_exporter_up")),
		summary: "The lock exporter keeps running out of time scanning a namespace.",
		description: fmt.Sprintf("lock-exporter {{ $labels.instance }} has not finished scanning lock "+
			"namespace {{ $labels.lock_namespace }} within its deadline for %s "+
			"(lock_exporter_scrape_complete {{ $value }}): that namespace's key counts, TTLs and idle "+
			"times are partial.", c.For),
	})
}

func (b builder) exporterKeysTruncated(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name:    AlertExporterKeysTruncated,
		expr:    b.exp("lock_exporter_keys_truncated") + " > 0",
		summary: "The lock exporter stops at its key cap in a namespace.",
		description: fmt.Sprintf("lock-exporter {{ $labels.instance }} has stopped at its per-namespace "+
			"key cap in lock namespace {{ $labels.lock_namespace }} for %s "+
			"(lock_exporter_keys_truncated {{ $value }}): counts cover only the keys scanned before the cap.",
			c.For),
	})
}

// exporterConfigReloadFailed fires while an exporter serves an older configuration than its
// file: a reload (SIGHUP, POST /-/reload) found the file unloadable, so namespaces or targets
// added there are not monitored. A restart would fail outright on the same file.
func (b builder) exporterConfigReloadFailed(c packconfig.SimpleAlert) []alertSpec {
	return tuned(c, alertSpec{
		name:    AlertExporterConfigReloadFailed,
		expr:    b.exp("lock_exporter_config_last_reload_successful") + " == 0",
		summary: "The lock exporter's configuration file does not load.",
		description: fmt.Sprintf("lock-exporter {{ $labels.instance }} has failed to reload its configuration "+
			"for %s and still serves the previous one: what changed in the file is not monitored, and a "+
			"restart would fail on the same file. Its log names the reason.", c.For),
	})
}

// absentLookback is how long a cluster that stopped reporting lock_exporter_up is remembered
// by LockExporterAbsent when cluster_labels are set.
const absentLookback = "1d"

// exporterAbsentExpr fires when no exporter series exists at all. With cluster labels, absent()
// alone would only fire once every cluster went silent, so a second arm names each cluster that
// reported within absentLookback but reports nothing now. A cluster silent for longer than that
// is forgotten (its alert resolves); the description says so.
func (b builder) exporterAbsentExpr() string {
	up := b.exp("lock_exporter_up")
	expr := "absent(" + up + ")"
	if len(b.cfg.ClusterLabels) == 0 {
		return expr
	}
	group := "group by (" + strings.Join(b.cfg.ClusterLabels, ", ") + ") "
	return fmt.Sprintf("%s or (%s(max_over_time(%s[%s])) unless %s(%s))",
		expr, group, up, absentLookback, group, up)
}

// absentNote tells the reader of a per-cluster LockExporterAbsent how long the alert can last.
func (b builder) absentNote() string {
	if len(b.cfg.ClusterLabels) == 0 {
		return ""
	}
	return " A cluster whose exporter went silent is reported for up to " + absentLookback +
		" after its last sample; after that only the loss of every exporter fires this alert."
}
