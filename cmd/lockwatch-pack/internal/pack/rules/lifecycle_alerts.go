package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// attributableEnds are the reasons of lock_key_ends_total a lapse ratio divides by: every end
// the feed could tell the cause of. unknown ends are left out of both sides, so an exporter that
// cannot attribute ends reads as no traffic rather than as healthy or failing.
const attributableEnds = "deleted|expired|evicted|overwritten"

// lifecycleRatio is what differs between the two lifecycle ratio alerts: the events counted, the
// events they are a share of, and the words.
type lifecycleRatio struct {
	name        string
	part, whole func(w model.Duration) string
	summary     string
	what        string
}

// lapseRatioHigh fires on the share of a namespace's attributable hold ends that were expiries:
// holders that neither released nor renewed in time, in any client's locks.
func (b builder) lapseRatioHigh(c packconfig.EventRatioAlert) []alertSpec {
	ends := func(reason string) func(model.Duration) string {
		return func(w model.Duration) string {
			return fmt.Sprintf("sum %s (increase(%s[%s]))", b.byNamespace(), b.exp("lock_key_ends_total", reason), w)
		}
	}
	return b.lifecycleRatioAlert(c, lifecycleRatio{
		name:    AlertKeyLapseRatioHigh,
		part:    ends(`reason="expired"`),
		whole:   ends(`reason=~"` + attributableEnds + `"`),
		summary: "Lock holds keep ending by expiry instead of release.",
		what: "of the lock holds that ended in lock namespace {{ $labels.lock_namespace }} " +
			"(exporter {{ $labels.instance }}) ended because the lock expired under its holder",
	})
}

// takeoverRatioHigh fires on the share of a namespace's acquisitions that took a key over soon
// after its previous hold expired or was overwritten: the second worker of a lapse.
func (b builder) takeoverRatioHigh(c packconfig.EventRatioAlert) []alertSpec {
	counted := func(metric string) func(model.Duration) string {
		return func(w model.Duration) string {
			return fmt.Sprintf("sum %s (increase(%s[%s]))", b.byNamespace(), b.exp(metric), w)
		}
	}
	return b.lifecycleRatioAlert(c, lifecycleRatio{
		name:    AlertKeyTakeoverRatioHigh,
		part:    counted("lock_key_takeovers_total"),
		whole:   counted("lock_key_acquisitions_total"),
		summary: "Locks keep being taken over after their holder's lease expired.",
		what: "of the acquisitions in lock namespace {{ $labels.lock_namespace }} " +
			"(exporter {{ $labels.instance }}) took over a lock whose previous hold had just expired or been overwritten",
	})
}

// lifecycleRatioAlert builds the expression both lifecycle alerts share. The ratio must exceed
// the threshold over the long window (the problem is big) and the short one (it still goes on);
// the long window must hold min_events events, so three acquisitions an hour never page; and the
// exporter must have followed the namespace on every scrape of the long window, since counters
// frozen or partial while it did not follow would read as a ratio of what it happened to see.
// Namespaces declared to end by expiry on purpose are left out: their expiries are their
// releases (the exporter counts no takeover after one), so neither ratio says anything there.
func (b builder) lifecycleRatioAlert(c packconfig.EventRatioAlert, r lifecycleRatio) []alertSpec {
	expr := eventRatioExpr(c, r.part, r.whole) + fmt.Sprintf(" and %s min_over_time(%s[%s]) == 1 unless %s %s == 1",
		b.onNamespace(), b.exp("lock_exporter_lifecycle_following"), c.Long,
		b.onNamespace(), b.exp("lock_exporter_lifecycle_ends_by_expiry"))
	return tuned(packconfig.SimpleAlert{Disabled: c.Disabled, Severity: c.Severity, For: c.For}, alertSpec{
		name:    r.name,
		expr:    expr,
		summary: r.summary,
		description: fmt.Sprintf("{{ $value | humanizePercentage }} %s over the last %s, above %s over the last %s "+
			"as well, for %s; the exporter followed the namespace throughout.",
			r.what, c.Long, percent(c.Threshold), c.Short, c.For),
	})
}

// eventRatioExpr is the traffic-guarded two-window condition of an EventRatioAlert: part over
// whole above the threshold over the long window (the problem is big) and over the short one (it
// still goes on), and at least min_events of whole in the long window. Whole is filtered to
// "> 0", so a window without events has no ratio rather than NaN.
func eventRatioExpr(c packconfig.EventRatioAlert, part, whole func(model.Duration) string) string {
	ratio := func(w model.Duration) string {
		return fmt.Sprintf("%s / (%s > 0)", part(w), whole(w))
	}
	expr := fmt.Sprintf("%s > %s and %s > %s", ratio(c.Long), num(c.Threshold), ratio(c.Short), num(c.Threshold))
	if c.MinEvents > 0 {
		expr += fmt.Sprintf(" and %s >= %s", whole(c.Long), num(c.MinEvents))
	}
	return expr
}

// namespaceOfTarget are the labels that name one namespace of one exporter target: the cluster
// labels, the target's identity and the lock namespace. The lifecycle alerts aggregate and match
// by them, so their alerts carry the same labels whatever else a target is labelled with.
func (b builder) namespaceOfTarget() string {
	return strings.Join(append(slices.Clone(b.cfg.ClusterLabels), "job", "instance", "lock_namespace"), ", ")
}

func (b builder) byNamespace() string { return "by (" + b.namespaceOfTarget() + ")" }

func (b builder) onNamespace() string { return "on (" + b.namespaceOfTarget() + ")" }
