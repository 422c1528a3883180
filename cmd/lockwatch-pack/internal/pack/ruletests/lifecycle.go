package ruletests

import (
	"slices"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// lifecycleWrite writes a namespace's lifecycle series: the counters write gives, and the
// exporter's gauges saying whether it follows the namespace and whether the namespace is
// declared to end by expiry.
func lifecycleWrite(following, byExpiry float64, counters func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64)) func(*scenario, map[string]string, func(time.Duration) float64, func(time.Duration) float64) {
	return func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
		counters(sc, lbls, bad, good)
		sc.add("lock_exporter_lifecycle_following", lbls, sc.tl.gauge(following, following, 0, 0))
		sc.add("lock_exporter_lifecycle_ends_by_expiry", lbls, sc.tl.gauge(byExpiry, byExpiry, 0, 0))
	}
}

// lifecycleScenario is ratioScenario for a lifecycle alert, plus two namespaces at twice the
// threshold that must not fire: one the exporter does not follow, one declared to end by expiry.
func (g *gen) lifecycleScenario(alert string, c packconfig.EventRatioAlert, counters func(*scenario, map[string]string, func(time.Duration) float64, func(time.Duration) float64)) []scenario {
	keepNames := append(slices.Clone(g.cfg.ClusterLabels), "job", "instance", "lock_namespace")
	labels := func(ns string) map[string]string { return g.expLabels(1, "exporter-1:9360", ns) }
	ra := ratioAlert{alert: alert, tiers: eventTier(c), guard: c.MinEvents, keep: keepNames, labels: labels,
		unselected: func(ns string) []map[string]string { return g.expUnselected(1, "exporter-1:9360", ns) },
		write:      lifecycleWrite(1, 0, counters)}
	sc := g.ratioScenario(ra)
	if c.Threshold >= 1 {
		return []scenario{sc}
	}
	ratio, perStep := min(2*c.Threshold, (1+c.Threshold)/2), max(2*c.MinEvents, 10)
	for _, ns := range []struct {
		name                string
		following, byExpiry float64
	}{{"not-followed", 0, 0}, {"ends-by-expiry", 1, 1}} {
		lbls := labels(ns.name)
		lifecycleWrite(ns.following, ns.byExpiry, counters)(&sc, lbls,
			func(time.Duration) float64 { return ratio * perStep }, func(time.Duration) float64 { return (1 - ratio) * perStep })
		sc.expect = append(sc.expect, expected{alert: alert, labels: keep(lbls, c.Severity, keepNames...), holds: never})
	}
	return []scenario{sc}
}

// lapseRatio: holds that ended by expiry, over every end whose reason is known.
func (g *gen) lapseRatio() []scenario {
	return g.lifecycleScenario(rules.AlertKeyLapseRatioHigh, g.cfg.Alerts.LapseRatio,
		func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
			sc.add("lock_key_ends_total", with(lbls, "reason", "expired"), sc.tl.counter(bad))
			sc.add("lock_key_ends_total", with(lbls, "reason", "deleted"), sc.tl.counter(good))
		})
}

// takeoverRatio: acquisitions that took over a lapsed key, over all acquisitions.
func (g *gen) takeoverRatio() []scenario {
	return g.lifecycleScenario(rules.AlertKeyTakeoverRatioHigh, g.cfg.Alerts.TakeoverRatio,
		func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
			sc.add("lock_key_takeovers_total", lbls, sc.tl.counter(bad))
			sc.add("lock_key_acquisitions_total", lbls, sc.tl.counter(func(t time.Duration) float64 { return bad(t) + good(t) }))
		})
}
