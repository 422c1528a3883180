package rules

import (
	"fmt"
	"slices"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// recordingGroups returns one group per window, so a deployment can give the long windows a
// slower evaluation interval without touching the short ones.
func (b builder) recordingGroups() ([]Group, error) {
	var groups []Group
	for _, w := range b.windows() {
		var rules []Rule
		for _, r := range b.recordingRules(w) {
			e, err := parse(r.name, r.expr)
			if err != nil {
				return nil, err
			}
			rules = append(rules, Rule{Record: r.name, Expr: e})
		}
		groups = append(groups, Group{Name: "lockwatch-recording-" + w.String(), Rules: rules})
	}
	return groups, nil
}

// windows returns the recording windows: the configured ones plus every window an enabled alert
// reads, sorted and without duplicates.
func (b builder) windows() []model.Duration {
	ws := slices.Clone(b.cfg.RecordingWindows)
	a := b.cfg.Alerts
	for _, r := range []packconfig.RatioAlert{a.NotOwnedRatio, a.RenewalFailureRatio} {
		if !r.Disabled {
			ws = append(ws, r.Fast.Long, r.Fast.Short, r.Slow.Long, r.Slow.Short)
		}
	}
	if !a.Abandonments.Disabled {
		ws = append(ws, a.Abandonments.Long, a.Abandonments.Short)
	}
	if !a.WaitP99.Disabled {
		ws = append(ws, a.WaitP99.Long, a.WaitP99.Short)
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}

type recording struct {
	name, expr string
}

// recordingRules are the rules of one window. Ratios sum numerator and denominator separately
// before dividing (never an average of per-instance ratios), and divide only by a denominator
// filtered to "> 0": with no traffic the ratio has no sample instead of NaN or +Inf, and one NaN
// would otherwise poison every sum and alert built on it.
func (b builder) recordingRules(w model.Duration) []recording {
	rate := func(sel string) string {
		return fmt.Sprintf("sum %s (rate(%s[%s]))", b.by(), sel, w)
	}
	renewals := rate(b.lib("lock_renewals_total"))
	releases := rate(b.lib("lock_releases_total"))
	operations := renewals + " + " + releases
	acquires := rate(b.lib("lock_acquire_wait_seconds_count"))

	rules := []recording{
		{OperationsRate(w), operations},
		{NotOwnedRatio(w), fmt.Sprintf("(%s + %s) / ((%s) > 0)",
			rate(b.lib("lock_renewals_total", `outcome="not_owned"`)),
			rate(b.lib("lock_releases_total", `outcome="not_owned"`)),
			operations)},
		{RenewalsRate(w), renewals},
		{RenewalFailureRatio(w), fmt.Sprintf("%s / (%s > 0)",
			rate(b.lib("lock_renewals_total", `outcome="failed"`)), renewals)},
		{AbandonedRate(w), rate(b.lib("lock_abandoned_total"))},
		{AcquiresRate(w), acquires},
	}
	// histogram_quantile over empty buckets is NaN, so a quantile is only recorded where the
	// window saw at least one acquire.
	for _, q := range Quantiles() {
		rules = append(rules, recording{AcquireWaitQuantile(q, w), fmt.Sprintf(
			"histogram_quantile(%s, sum %s (rate(%s[%s]))) and %s > 0",
			num(q.Value), b.by("le"), b.lib("lock_acquire_wait_seconds_bucket"), w, acquires)})
	}
	return rules
}
