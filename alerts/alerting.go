package alerts

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/internal/packconfig"
)

// alertSpec is an alert before its expression is parsed.
type alertSpec struct {
	name, expr, severity string
	forDur               model.Duration
	summary, description string
}

// alertGroups returns the alerts on the lease library's metrics and those on the exporter's, as
// two groups: they come from different scrape jobs and are often routed to different teams.
func (b builder) alertGroups() ([]Group, error) {
	var groups []Group
	for _, g := range []struct {
		name  string
		specs []alertSpec
	}{
		{"lockwatch-library", b.libraryAlerts()},
		{"lockwatch-exporter", b.exporterAlerts()},
	} {
		var rules []Rule
		for _, s := range g.specs {
			e, err := parse(s.name, s.expr)
			if err != nil {
				return nil, err
			}
			rules = append(rules, Rule{
				Alert:  s.name,
				Expr:   e,
				For:    s.forDur,
				Labels: map[string]string{"severity": s.severity},
				Annotations: Annotations{
					Summary:     s.summary,
					Description: s.description + b.where(),
					RunbookURL:  b.cfg.RunbookBaseURL + "#" + strings.ToLower(s.name),
				},
			})
		}
		if len(rules) > 0 {
			groups = append(groups, Group{Name: g.name, Rules: rules})
		}
	}
	return groups, nil
}

func (b builder) libraryAlerts() []alertSpec {
	a := b.cfg.Alerts
	var specs []alertSpec
	if !a.NotOwnedRatio.Disabled {
		specs = append(specs, ratioTiers(a.NotOwnedRatio, ratioText{
			name:    AlertNotOwnedRatioHigh,
			ratio:   NotOwnedRatio,
			traffic: OperationsRate,
			summary: "Lease renewals and releases keep finding the lock owned by someone else.",
			what: "of lease renewals and releases in lock namespace {{ $labels.lock_namespace }} " +
				"(job {{ $labels.job }}) found the lock already owned by someone else",
		})...)
	}
	if !a.RenewalFailureRatio.Disabled {
		specs = append(specs, ratioTiers(a.RenewalFailureRatio, ratioText{
			name:    AlertRenewalFailureRatioHigh,
			ratio:   RenewalFailureRatio,
			traffic: RenewalsRate,
			summary: "Lease renewals keep failing with Redis errors or timeouts.",
			what: "of lease renewals in lock namespace {{ $labels.lock_namespace }} " +
				"(job {{ $labels.job }}) failed with an error or timeout",
		})...)
	}
	if ab := a.Abandonments; !ab.Disabled {
		specs = append(specs, alertSpec{
			name: AlertAbandonmentsSustained,
			// The short window must stay non-zero for the whole for: duration, which is longer
			// than the short window: one burst of abandonments (a failover) cannot do that.
			expr: fmt.Sprintf("%s * %s >= %s and %s > 0",
				AbandonedRate(ab.Long), seconds(ab.Long), num(ab.MinCount), AbandonedRate(ab.Short)),
			severity: ab.Severity,
			forDur:   ab.For,
			summary:  "Leases keep being abandoned after repeated renew failures.",
			description: fmt.Sprintf("{{ printf \"%%.0f\" $value }} leases in lock namespace "+
				"{{ $labels.lock_namespace }} (job {{ $labels.job }}) were abandoned after repeated "+
				"renew failures in the last %s, and abandonments continued in every %s window for %s.",
				ab.Long, ab.Short, ab.For),
		})
	}
	if wt := a.WaitP99; !wt.Disabled {
		expr := fmt.Sprintf("%s > %s and %s > %s",
			AcquireWaitQuantile(p99, wt.Long), num(wt.ThresholdSeconds),
			AcquireWaitQuantile(p99, wt.Short), num(wt.ThresholdSeconds))
		if wt.MinAcquires > 0 {
			expr += fmt.Sprintf(" and %s * %s >= %s", AcquiresRate(wt.Long), seconds(wt.Long), num(wt.MinAcquires))
		}
		specs = append(specs, alertSpec{
			name:     AlertWaitP99High,
			expr:     expr,
			severity: wt.Severity,
			forDur:   wt.For,
			summary:  "Lock acquire wait p99 is high.",
			description: fmt.Sprintf("The 99th percentile of acquire waits in lock namespace "+
				"{{ $labels.lock_namespace }} (job {{ $labels.job }}) is {{ $value | humanizeDuration }} "+
				"over the last %s, above %s over the last %s as well.",
				wt.Long, humanSeconds(wt.ThresholdSeconds), wt.Short),
		})
	}
	return specs
}

// ratioText is what differs between the two ratio alerts.
type ratioText struct {
	name           string
	ratio, traffic func(model.Duration) string
	summary, what  string
}

// ratioTiers returns the fast and the slow tier of a ratio alert. Both windows of a tier must
// exceed the threshold: the long one shows the problem is large, the short one that it is still
// going on. The traffic guard needs min_operations in the long window.
func ratioTiers(r packconfig.RatioAlert, t ratioText) []alertSpec {
	var specs []alertSpec
	for _, tier := range []packconfig.Tier{r.Fast, r.Slow} {
		expr := fmt.Sprintf("%s > %s and %s > %s",
			t.ratio(tier.Long), num(tier.Threshold), t.ratio(tier.Short), num(tier.Threshold))
		if r.MinOperations > 0 {
			expr += fmt.Sprintf(" and %s * %s >= %s", t.traffic(tier.Long), seconds(tier.Long), num(r.MinOperations))
		}
		specs = append(specs, alertSpec{
			name:     t.name,
			expr:     expr,
			severity: tier.Severity,
			forDur:   tier.For,
			summary:  t.summary,
			description: fmt.Sprintf("{{ $value | humanizePercentage }} %s over the last %s, above %s over the last %s as well.",
				t.what, tier.Long, percent(tier.Threshold), tier.Short),
		})
	}
	return specs
}

func (b builder) exporterAlerts() []alertSpec {
	a := b.cfg.Alerts
	all := []struct {
		cfg  packconfig.SimpleAlert
		spec alertSpec
	}{
		{a.KeyWithoutTTL, alertSpec{
			name:    AlertKeyWithoutTTL,
			expr:    b.exp("lock_keys_without_ttl") + " > 0",
			summary: "Lock keys without an expiry exist.",
			description: "Lock namespace {{ $labels.lock_namespace }} has {{ $value }} live key(s) with no expiry " +
				"(exporter {{ $labels.instance }}): such a lock never frees on its own.",
		}},
		{packconfig.SimpleAlert{
			Disabled: a.RenewalStalled.Disabled, Severity: a.RenewalStalled.Severity, For: a.RenewalStalled.For,
		}, alertSpec{
			name: AlertRenewalStalled,
			// Both series come from the same exporter target, so default matching on all labels
			// pairs each namespace with its own declared interval.
			expr: fmt.Sprintf("%s > %s * %s", b.exp("lock_key_idle_max_seconds"),
				num(a.RenewalStalled.Factor), b.exp("lock_expected_renew_interval_seconds")),
			summary: "A lock holder stopped renewing its lease.",
			description: fmt.Sprintf("The stalest live key in lock namespace {{ $labels.lock_namespace }} "+
				"has not been renewed for {{ $value | humanizeDuration }}, more than %s times the "+
				"namespace's declared renew interval (exporter {{ $labels.instance }}).",
				num(a.RenewalStalled.Factor)),
		}},
		{a.ExporterRedisDown, alertSpec{
			name:    AlertExporterRedisDown,
			expr:    b.exp("lock_exporter_up") + " == 0",
			summary: "The lock exporter cannot reach Redis.",
			description: fmt.Sprintf("lock-exporter {{ $labels.instance }} (job {{ $labels.job }}) has reported "+
				"lock_exporter_up {{ $value }} on every scrape for %s: it cannot reach Redis, and lock key "+
				"metrics are missing while that lasts.", a.ExporterRedisDown.For),
		}},
		{a.ExporterAbsent, alertSpec{
			name:    AlertExporterAbsent,
			expr:    b.exporterAbsentExpr(),
			summary: "No lock exporter is being scraped.",
			description: fmt.Sprintf("Prometheus has had no lock_exporter_up series{{ with $labels.job }} "+
				"for job {{ . }}{{ end }} for %s: lock key metrics are missing and the other exporter "+
				"alerts cannot fire.%s", a.ExporterAbsent.For, b.absentNote()),
		}},
		{a.ExporterScrapeIncomplete, alertSpec{
			name: AlertExporterScrapeIncomplete,
			// The exporter also reports every namespace incomplete when Redis fails it
			// (lock_exporter_up 0): without the guard a Redis outage would fire this alert once
			// per namespace next to LockExporterRedisDown, and Alertmanager cannot inhibit it by
			// namespace since the names differ. With up at 1 no command failed and every node
			// answered, so an incomplete namespace was cut by the scan deadline, which is what
			// this alert is about. Both series come from one target: match on its identity
			// only, as the left side also carries lock_namespace.
			expr: fmt.Sprintf("%s == 0 and %s %s == 1",
				b.exp("lock_exporter_scrape_complete"), b.on(), b.exp("lock_exporter_up")),
			summary: "The lock exporter keeps running out of time scanning a namespace.",
			description: fmt.Sprintf("lock-exporter {{ $labels.instance }} has not finished scanning lock "+
				"namespace {{ $labels.lock_namespace }} within its deadline for %s "+
				"(lock_exporter_scrape_complete {{ $value }}): that namespace's key counts, TTLs and idle "+
				"times are partial.", a.ExporterScrapeIncomplete.For),
		}},
		{a.ExporterKeysTruncated, alertSpec{
			name:    AlertExporterKeysTruncated,
			expr:    b.exp("lock_exporter_keys_truncated") + " > 0",
			summary: "The lock exporter stops at its key cap in a namespace.",
			description: fmt.Sprintf("lock-exporter {{ $labels.instance }} has stopped at its per-namespace "+
				"key cap in lock namespace {{ $labels.lock_namespace }} for %s "+
				"(lock_exporter_keys_truncated {{ $value }}): counts cover only the keys scanned before the cap.",
				a.ExporterKeysTruncated.For),
		}},
	}
	var specs []alertSpec
	for _, x := range all {
		if x.cfg.Disabled {
			continue
		}
		x.spec.severity = x.cfg.Severity
		x.spec.forDur = x.cfg.For
		specs = append(specs, x.spec)
	}
	return specs
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

// seconds renders a window's length in seconds, to turn a recorded per-second rate into a count.
func seconds(w model.Duration) string {
	return num(time.Duration(w).Seconds())
}

// percent renders a ratio as a percentage, e.g. 0.05 as 5%.
func percent(ratio float64) string {
	return strconv.FormatFloat(ratio*100, 'g', 6, 64) + "%"
}

// humanSeconds renders a threshold in seconds the way Prometheus writes durations, e.g. 1s, 1.5s,
// 250ms.
func humanSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}
