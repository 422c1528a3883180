package ruletests

import (
	"math"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// ratioTier is one severity of a ratio alert: above threshold over long and short for for:.
type ratioTier struct {
	severity           string
	long, short, fordu time.Duration
	threshold          float64
}

// ratioAlert is what differs between the ratio alerts: their tiers, the traffic guard (events of
// the whole a tier's long window must hold, 0 for none), how a namespace's events are written as
// the metrics the alert reads, and the labels the alert keeps.
type ratioAlert struct {
	alert string
	tiers []ratioTier
	guard float64
	// write adds the series of one namespace: bad and good are the events of the ratio's part
	// and of the rest of its whole in the step ending at t.
	write  func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64)
	keep   []string
	labels func(ns string) map[string]string
	// unselected are label sets of namespace ns the alert's selector does not select.
	unselected func(ns string) []map[string]string
}

// ratioNamespace is one namespace of a ratio scenario.
type ratioNamespace struct {
	name    string
	ratio   float64
	perStep float64 // events of the whole per step
	labels  map[string]string
	// unselected: the alert's selector does not select it, so it never fires.
	unselected bool
}

// ratioScenario shows a ratio alert's tiers: for each, a namespace at twice its threshold (which
// fires once both windows show it for for:, and resolves once the short window is clean after
// recovery) and one at half of it (which does not); a namespace above every threshold with less
// traffic than the guard asks for; and one the selector does not select. Every namespace keeps
// its ratio from the start, so both windows read it exactly and it is the alert's value.
func (g *gen) ratioScenario(ra ratioAlert) scenario {
	var maxFor, maxShort, maxLong time.Duration
	for _, t := range ra.tiers {
		maxFor, maxShort, maxLong = max(maxFor, t.fordu), max(maxShort, t.short), max(maxLong, t.long)
	}
	badUntil := roundUp(maxFor, g.step) + 4*g.step
	sc := scenario{name: "twice each threshold fires and resolves, half does not; traffic under the guard does not",
		tl: g.timelineTo(badUntil + maxShort)}
	for _, ns := range g.ratioNamespaces(ra, maxLong) {
		if ns.labels == nil {
			continue
		}
		bad := rateUntil(ns.ratio*ns.perStep, badUntil, 0)
		good := rateUntil((1-ns.ratio)*ns.perStep, badUntil, ns.perStep)
		ra.write(&sc, ns.labels, bad, good)
		for _, t := range ra.tiers {
			holds := never
			if ns.ratio > t.threshold && ns.perStep >= ra.guard && !ns.unselected {
				holds = span{from: g.step, surelyFrom: 2 * g.step, surelyUntil: badUntil + g.step, until: badUntil + t.short}
			}
			sc.expect = append(sc.expect, expected{alert: ra.alert, labels: keep(ns.labels, t.severity, ra.keep...),
				holds: holds, forDur: t.fordu, value: ns.ratio})
		}
	}
	return sc
}

// ratioNamespaces are the namespaces of ratioScenario; a namespace whose ratio is too close to a
// threshold to tell on which side Prometheus's arithmetic puts it is left out.
func (g *gen) ratioNamespaces(ra ratioAlert, maxLong time.Duration) []ratioNamespace {
	busy := max(2*ra.guard, 10) // the guard is met from the first step on
	var nss []ratioNamespace
	for _, t := range ra.tiers {
		if t.threshold < 1 {
			nss = append(nss, ratioNamespace{name: "twice-" + t.severity + "-threshold", ratio: min(2*t.threshold, (1+t.threshold)/2), perStep: busy})
		}
		nss = append(nss, ratioNamespace{name: "half-" + t.severity + "-threshold", ratio: t.threshold / 2, perStep: busy})
	}
	if ra.guard > 0 {
		// A quarter of the guard in the longest window.
		perStep := ra.guard / 4 / float64(maxLong/g.step)
		nss = append(nss, ratioNamespace{name: "under-traffic-guard", ratio: 1, perStep: perStep})
	}
	var out []ratioNamespace
	for _, ns := range nss {
		if nearThreshold(ns.ratio, ra.tiers) {
			continue
		}
		ns.labels = ra.labels(ns.name)
		out = append(out, ns)
		if ns.name == "twice-"+ra.tiers[0].severity+"-threshold" {
			for _, lbls := range ra.unselected("unselected") {
				out = append(out, ratioNamespace{name: "unselected", ratio: ns.ratio, perStep: ns.perStep, labels: lbls, unselected: true})
			}
		}
	}
	return out
}

func nearThreshold(ratio float64, tiers []ratioTier) bool {
	for _, t := range tiers {
		if math.Abs(ratio-t.threshold) < 0.01*t.threshold {
			return true
		}
	}
	return false
}

func tiersOf(r packconfig.RatioAlert) []ratioTier {
	var out []ratioTier
	for _, t := range []packconfig.Tier{r.Fast, r.Slow} {
		out = append(out, ratioTier{severity: t.Severity, long: time.Duration(t.Long), short: time.Duration(t.Short),
			fordu: time.Duration(t.For), threshold: t.Threshold})
	}
	return out
}

func eventTier(c packconfig.EventRatioAlert) []ratioTier {
	return []ratioTier{{severity: c.Severity, long: time.Duration(c.Long), short: time.Duration(c.Short),
		fordu: time.Duration(c.For), threshold: c.Threshold}}
}

// libraryKeep are the labels the library alerts keep: they aggregate a job's instances.
func (g *gen) libraryKeep() []string {
	return append(append([]string{}, g.cfg.ClusterLabels...), "job", "lock_namespace")
}

// notOwnedRatio: renewals and releases answered "not owned", over all renewals and releases.
func (g *gen) notOwnedRatio() []scenario {
	return []scenario{g.ratioScenario(ratioAlert{
		alert: rules.AlertNotOwnedRatioHigh, tiers: tiersOf(g.cfg.Alerts.NotOwnedRatio), guard: g.cfg.Alerts.NotOwnedRatio.MinOperations,
		keep: g.libraryKeep(), labels: g.libLabels, unselected: g.libUnselected,
		write: func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
			half := func(f func(time.Duration) float64) func(time.Duration) float64 {
				return func(t time.Duration) float64 { return f(t) / 2 }
			}
			none := func(time.Duration) float64 { return 0 }
			for _, m := range []string{"lock_renewals_total", "lock_releases_total"} {
				sc.add(m, with(lbls, "outcome", "ok"), sc.tl.counter(half(good)))
				sc.add(m, with(lbls, "outcome", "not_owned"), sc.tl.counter(half(bad)))
			}
			sc.add("lock_renewals_total", with(lbls, "outcome", "failed"), sc.tl.counter(none))
		},
	})}
}

// renewalFailureRatio: renewals that failed, over all renewals.
func (g *gen) renewalFailureRatio() []scenario {
	return []scenario{g.ratioScenario(ratioAlert{
		alert: rules.AlertRenewalFailureRatioHigh, tiers: tiersOf(g.cfg.Alerts.RenewalFailureRatio), guard: g.cfg.Alerts.RenewalFailureRatio.MinOperations,
		keep: g.libraryKeep(), labels: g.libLabels, unselected: g.libUnselected,
		write: func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
			sc.add("lock_renewals_total", with(lbls, "outcome", "ok"), sc.tl.counter(good))
			sc.add("lock_renewals_total", with(lbls, "outcome", "failed"), sc.tl.counter(bad))
			sc.add("lock_renewals_total", with(lbls, "outcome", "not_owned"), sc.tl.counter(func(time.Duration) float64 { return 0 }))
		},
	})}
}

// fencedWrites: fenced writes rejected, over all fenced writes.
func (g *gen) fencedWrites() []scenario {
	c := g.cfg.Alerts.FencedWriteRejectionRatio
	return []scenario{g.ratioScenario(ratioAlert{
		alert: rules.AlertFencedWriteRejectionRatioHigh, tiers: eventTier(c), guard: c.MinEvents,
		keep: g.libraryKeep(), labels: g.libLabels, unselected: g.libUnselected,
		write: func(sc *scenario, lbls map[string]string, bad, good func(time.Duration) float64) {
			sc.add("lock_fenced_writes_total", with(lbls, "outcome", "applied"), sc.tl.counter(good))
			sc.add("lock_fenced_writes_total", with(lbls, "outcome", "rejected"), sc.tl.counter(bad))
		},
	})}
}
