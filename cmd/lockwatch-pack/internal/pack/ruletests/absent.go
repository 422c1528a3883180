package ruletests

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
)

// exporterAbsent shows LockExporterAbsent: every exporter the selector selects goes silent
// (its series end) for longer than for: and the alert fires, then resolves when one is back,
// while an exporter the selector does not select keeps reporting. With cluster labels, a second
// scenario silences one cluster's exporter only, and the alert names that cluster.
func (g *gen) exporterAbsent() []scenario {
	c := g.cfg.Alerts.ExporterAbsent
	forDur := time.Duration(c.For)
	silentFrom := 4 * g.step
	silentUntil := silentFrom + roundUp(forDur, g.step) + 4*g.step
	holds := span{from: silentFrom, surelyFrom: silentFrom, surelyUntil: silentUntil, until: silentUntil}
	tl := g.timelineTo(silentUntil + g.step)
	up := func(sc *scenario, lbls map[string]string, silent bool) {
		s := tl.gauge(1, 1, 0, 0)
		if silent {
			s = tl.gauge(1, stale, silentFrom, silentUntil)
		}
		sc.add("lock_exporter_up", lbls, s)
	}
	all := scenario{name: "every exporter silent for longer than for: fires and resolves", tl: tl}
	clusters := []int{1}
	if len(g.cfg.ClusterLabels) > 0 {
		clusters = append(clusters, 2)
	}
	var seen []map[string]string
	for _, cl := range clusters {
		lbls := g.expLabels(cl, "exporter-1:9360", "")
		if slices.ContainsFunc(seen, func(s map[string]string) bool { return maps.Equal(s, lbls) }) {
			continue // the selector fixes the cluster label: one cluster only
		}
		seen = append(seen, lbls)
		up(&all, lbls, true)
		if len(g.cfg.ClusterLabels) > 0 {
			all.expect = append(all.expect, expected{alert: rules.AlertExporterAbsent,
				labels: keep(lbls, c.Severity, g.cfg.ClusterLabels...), holds: holds, forDur: forDur, value: 1})
		}
	}
	for _, lbls := range g.expUnselected(1, "exporter-unselected:9360", "") {
		up(&all, lbls, false)
	}
	all.expect = append(all.expect, expected{alert: rules.AlertExporterAbsent,
		labels: with(absentLabels(g.exp.matchers), "severity", c.Severity), holds: holds, forDur: forDur, value: 1})
	scenarios := []scenario{all}

	one, two := g.expLabels(1, "exporter-1:9360", ""), g.expLabels(2, "exporter-1:9360", "")
	if len(g.cfg.ClusterLabels) > 0 && !maps.Equal(one, two) {
		sc := scenario{name: "one cluster's exporter silent for longer than for: fires for that cluster", tl: tl}
		up(&sc, one, false)
		up(&sc, two, true)
		sc.expect = append(sc.expect, expected{alert: rules.AlertExporterAbsent,
			labels: keep(two, c.Severity, g.cfg.ClusterLabels...), holds: holds, forDur: forDur, value: 1})
		scenarios = append(scenarios, sc)
	}
	return scenarios
}

// absentLabels are the labels absent() gives its one series: those the selector fixes by
// equality.
func absentLabels(ms []*labels.Matcher) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		if m.Type == labels.MatchEqual && m.Value != "" {
			out[m.Name] = m.Value
		}
	}
	return out
}
