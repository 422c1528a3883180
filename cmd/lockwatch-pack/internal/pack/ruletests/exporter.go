package ruletests

import (
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// gaugeAlert is an alert on the state an exporter reports in one gauge: the gauge at its bad
// value for for: fires.
type gaugeAlert struct {
	alert     string
	cfg       packconfig.SimpleAlert
	metric    string
	good, bad float64
	// perInstance: the gauge describes the exporter (no lock_namespace), so each actor is an
	// exporter instance of its own; otherwise each is a namespace of one exporter.
	perInstance bool
	// companions adds the other series the alert reads, for an actor whose gauge is bad over
	// [from, until).
	companions func(sc *scenario, lbls map[string]string, from, until time.Duration)
}

// gaugeActor is one namespace or instance of a gauge scenario.
type gaugeActor struct {
	name        string
	from, until time.Duration // when the gauge is bad
	fires       bool
	selected    bool
}

// gaugeScenario shows a gauge alert: bad for longer than for: fires and resolves when the gauge
// is good again; bad for less than for: (a blip) does not fire; good does not; bad on a series
// the exporter selector does not select does not.
func (g *gen) gaugeScenario(ga gaugeAlert) scenario {
	forDur := time.Duration(ga.cfg.For)
	badFrom := 2 * g.step
	badUntil := badFrom + roundUp(forDur, g.step) + 4*g.step
	sc := scenario{name: "bad for longer than for: fires and resolves; a shorter blip does not",
		tl: g.timelineTo(badUntil + g.step)}
	actors := []gaugeActor{
		{name: "stuck", from: badFrom, until: badUntil, fires: true, selected: true},
		{name: "healthy", selected: true},
		{name: "unselected", from: badFrom, until: badUntil},
	}
	if blip := blipLength(forDur, g.step); blip > 0 {
		actors = append(actors, gaugeActor{name: "blip", from: badFrom, until: badFrom + blip, selected: true})
	}
	for _, a := range actors {
		for _, lbls := range g.gaugeLabels(ga, a) {
			g.addGaugeActor(&sc, ga, a, lbls)
		}
	}
	return sc
}

// addGaugeActor adds an actor's series and what the alert must do for it.
func (g *gen) addGaugeActor(sc *scenario, ga gaugeAlert, a gaugeActor, lbls map[string]string) {
	sc.add(ga.metric, lbls, sc.tl.gauge(ga.good, ga.bad, a.from, a.until))
	if ga.companions != nil {
		ga.companions(sc, lbls, a.from, a.until)
	}
	holds := never
	if a.fires {
		holds = span{from: a.from, surelyFrom: a.from, surelyUntil: a.until, until: a.until}
	}
	sc.expect = append(sc.expect, expected{alert: ga.alert, labels: allBut(lbls, ga.cfg.Severity), holds: holds,
		forDur: time.Duration(ga.cfg.For), value: ga.bad})
}

// gaugeLabels are an actor's label sets: one, or for the unselected actor one per matcher of
// the selector.
func (g *gen) gaugeLabels(ga gaugeAlert, a gaugeActor) []map[string]string {
	instance, ns := "exporter-1:9360", a.name
	if ga.perInstance {
		instance, ns = "exporter-"+a.name+":9360", ""
	}
	if !a.selected {
		return g.expUnselected(1, instance, ns)
	}
	return []map[string]string{g.expLabels(1, instance, ns)}
}

// blipLength is a bad stretch shorter than for: (at least one sample), or 0 when for: is
// shorter than a step and no blip is shorter.
func blipLength(forDur, step time.Duration) time.Duration {
	if forDur < step {
		return 0
	}
	return max(step, forDur/2/step*step)
}

func (g *gen) keyWithoutTTL() []scenario {
	return []scenario{g.gaugeScenario(gaugeAlert{alert: rules.AlertKeyWithoutTTL, cfg: g.cfg.Alerts.KeyWithoutTTL,
		metric: "lock_keys_without_ttl", good: 0, bad: 3})}
}

func (g *gen) keysTruncated() []scenario {
	return []scenario{g.gaugeScenario(gaugeAlert{alert: rules.AlertExporterKeysTruncated, cfg: g.cfg.Alerts.ExporterKeysTruncated,
		metric: "lock_exporter_keys_truncated", good: 0, bad: 1})}
}

func (g *gen) exporterRedisDown() []scenario {
	return []scenario{g.gaugeScenario(gaugeAlert{alert: rules.AlertExporterRedisDown, cfg: g.cfg.Alerts.ExporterRedisDown,
		metric: "lock_exporter_up", good: 1, bad: 0, perInstance: true})}
}

func (g *gen) configReloadFailed() []scenario {
	return []scenario{g.gaugeScenario(gaugeAlert{alert: rules.AlertExporterConfigReloadFailed, cfg: g.cfg.Alerts.ExporterConfigReloadFailed,
		metric: "lock_exporter_config_last_reload_successful", good: 1, bad: 0, perInstance: true})}
}

// renewalStalled: a namespace's stalest key idle for twice factor renew intervals fires; idle for
// half of factor intervals is healthy.
func (g *gen) renewalStalled() []scenario {
	const interval = 20.0 // the namespace's declared renew interval, seconds
	c := g.cfg.Alerts.RenewalStalled
	return []scenario{g.gaugeScenario(gaugeAlert{alert: rules.AlertRenewalStalled,
		cfg:    packconfig.SimpleAlert{Disabled: c.Disabled, Severity: c.Severity, For: c.For},
		metric: "lock_key_idle_max_seconds", good: c.Factor * interval / 2, bad: 2 * c.Factor * interval,
		companions: func(sc *scenario, lbls map[string]string, _, _ time.Duration) {
			sc.add("lock_expected_renew_interval_seconds", lbls, sc.tl.gauge(interval, interval, 0, 0))
		},
	})}
}

// scrapeIncomplete: a namespace cut by the scan deadline while Redis answers fires; one cut
// while the exporter cannot reach Redis ("outage", lock_exporter_up 0) does not: that is
// LockExporterRedisDown's.
func (g *gen) scrapeIncomplete() []scenario {
	c := g.cfg.Alerts.ExporterScrapeIncomplete
	up := func(down bool) func(sc *scenario, lbls map[string]string, from, until time.Duration) {
		return func(sc *scenario, lbls map[string]string, from, until time.Duration) {
			exporter := with(lbls)
			delete(exporter, "lock_namespace")
			if !down {
				from, until = 0, 0
			}
			sc.add("lock_exporter_up", exporter, sc.tl.gauge(1, 0, from, until))
		}
	}
	sc := g.gaugeScenario(gaugeAlert{alert: rules.AlertExporterScrapeIncomplete, cfg: c,
		metric: "lock_exporter_scrape_complete", good: 1, bad: 0, companions: up(false)})
	outage := g.expLabels(1, "exporter-outage:9360", "outage")
	from, until := 2*g.step, 2*g.step+roundUp(time.Duration(c.For), g.step)+4*g.step
	sc.add("lock_exporter_scrape_complete", outage, sc.tl.gauge(1, 0, from, until))
	up(true)(&sc, outage, from, until)
	sc.expect = append(sc.expect, expected{alert: rules.AlertExporterScrapeIncomplete, labels: allBut(outage, c.Severity), holds: never})
	return []scenario{sc}
}
