package rules

import (
	"fmt"
	"slices"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// libraryAlerts are the alerts on the lease library's metrics, read through the recording rules,
// in the order they are written; a disabled one is left out.
func (b builder) libraryAlerts() []alertSpec {
	a := b.cfg.Alerts
	return slices.Concat(
		notOwnedRatioHigh(a.NotOwnedRatio),
		renewalFailureRatioHigh(a.RenewalFailureRatio),
		abandonmentsSustained(a.Abandonments),
		waitP99High(a.WaitP99),
		b.fencedWriteRejectionRatioHigh(a.FencedWriteRejectionRatio),
	)
}

// ratioText is what differs between the two ratio alerts.
type ratioText struct {
	name           string
	ratio, traffic func(model.Duration) string
	summary, what  string
}

// notOwnedRatioHigh fires on the share of renewals and releases that found the lease taken.
func notOwnedRatioHigh(r packconfig.RatioAlert) []alertSpec {
	return ratioTiers(r, ratioText{
		name:    AlertNotOwnedRatioHigh,
		ratio:   NotOwnedRatio,
		traffic: OperationsRate,
		summary: "Lease renewals and releases keep finding the lock owned by someone else.",
		what: "of lease renewals and releases in lock namespace {{ $labels.lock_namespace }} " +
			"(job {{ $labels.job }}) found the lock already owned by someone else",
	})
}

// renewalFailureRatioHigh fires on the share of renewals that failed with an error or timeout.
func renewalFailureRatioHigh(r packconfig.RatioAlert) []alertSpec {
	return ratioTiers(r, ratioText{
		name:    AlertRenewalFailureRatioHigh,
		ratio:   RenewalFailureRatio,
		traffic: RenewalsRate,
		summary: "Lease renewals keep failing with Redis errors or timeouts.",
		what: "of lease renewals in lock namespace {{ $labels.lock_namespace }} " +
			"(job {{ $labels.job }}) failed with an error or timeout",
	})
}

// ratioTiers returns the fast and the slow tier of a ratio alert. Both windows of a tier must
// exceed the threshold: the long one shows the problem is large, the short one that it is still
// going on. The traffic guard needs min_operations in the long window.
func ratioTiers(r packconfig.RatioAlert, t ratioText) []alertSpec {
	if r.Disabled {
		return nil
	}
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

// abandonmentsSustained fires on a count over the long window that keeps growing in every short
// one. The short window must stay non-zero for the whole for: duration, which is longer than the
// short window: one burst of abandonments (a failover) cannot do that.
func abandonmentsSustained(ab packconfig.AbandonmentAlert) []alertSpec {
	return tuned(packconfig.SimpleAlert{Disabled: ab.Disabled, Severity: ab.Severity, For: ab.For}, alertSpec{
		name: AlertAbandonmentsSustained,
		expr: fmt.Sprintf("%s * %s >= %s and %s > 0",
			AbandonedRate(ab.Long), seconds(ab.Long), num(ab.MinCount), AbandonedRate(ab.Short)),
		summary: "Leases keep being abandoned after repeated renew failures.",
		description: fmt.Sprintf("{{ printf \"%%.0f\" $value }} leases in lock namespace "+
			"{{ $labels.lock_namespace }} (job {{ $labels.job }}) were abandoned after repeated "+
			"renew failures in the last %s, and abandonments continued in every %s window for %s.",
			ab.Long, ab.Short, ab.For),
	})
}

// waitP99High fires when the recorded p99 of acquire waits is above the threshold over both
// windows, and the long window held enough acquires for a p99 to mean something.
func waitP99High(wt packconfig.WaitAlert) []alertSpec {
	expr := fmt.Sprintf("%s > %s and %s > %s",
		AcquireWaitQuantile(p99, wt.Long), num(wt.ThresholdSeconds),
		AcquireWaitQuantile(p99, wt.Short), num(wt.ThresholdSeconds))
	if wt.MinAcquires > 0 {
		expr += fmt.Sprintf(" and %s * %s >= %s", AcquiresRate(wt.Long), seconds(wt.Long), num(wt.MinAcquires))
	}
	return tuned(packconfig.SimpleAlert{Disabled: wt.Disabled, Severity: wt.Severity, For: wt.For}, alertSpec{
		name:    AlertWaitP99High,
		expr:    expr,
		summary: "Lock acquire wait p99 is high.",
		description: fmt.Sprintf("The 99th percentile of acquire waits in lock namespace "+
			"{{ $labels.lock_namespace }} (job {{ $labels.job }}) is {{ $value | humanizeDuration }} "+
			"over the last %s, above %s over the last %s as well.",
			wt.Long, humanSeconds(wt.ThresholdSeconds), wt.Short),
	})
}

// fencedWriteRejectionRatioHigh fires on the share of a job's fenced writes in a namespace that
// the storage rejected: a holder whose lease had passed to a newer one still wrote. Each such
// write was kept out, so one rejection is the fence working; a sustained share means holders
// keep outliving their leases while they work. Counted per job as the other library alerts are,
// across the job's instances.
func (b builder) fencedWriteRejectionRatioHigh(c packconfig.EventRatioAlert) []alertSpec {
	writes := func(outcome string) func(model.Duration) string {
		return func(w model.Duration) string {
			return fmt.Sprintf("sum %s (increase(%s[%s]))", b.by(), b.lib("lock_fenced_writes_total", outcome), w)
		}
	}
	return tuned(packconfig.SimpleAlert{Disabled: c.Disabled, Severity: c.Severity, For: c.For}, alertSpec{
		name:    AlertFencedWriteRejectionRatioHigh,
		expr:    eventRatioExpr(c, writes(`outcome="rejected"`), writes(`outcome=~"applied|rejected"`)),
		summary: "Fenced writes keep being rejected: lock holders keep writing after their lease passed on.",
		description: fmt.Sprintf("{{ $value | humanizePercentage }} of the fenced writes in lock namespace "+
			"{{ $labels.lock_namespace }} (job {{ $labels.job }}) over the last %s were rejected because a newer "+
			"holder had taken the lock, above %s over the last %s as well, for %s.",
			c.Long, percent(c.Threshold), c.Short, c.For),
	})
}
