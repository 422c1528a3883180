package ruletests

import (
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
)

// heldTooLong shows LockHeldTooLong against a declared expected_max_hold: a hold of twice the
// maximum seen by the exporter, or by the holding process's library, fires after for: and
// resolves when it ends; a shorter overrun, a hold under the maximum and a long hold in a
// namespace that declares no maximum do not.
func (g *gen) heldTooLong() []scenario {
	const maxHold, short = 600.0, 300.0 // seconds
	c := g.cfg.Alerts.HeldTooLong
	forDur := time.Duration(c.For)
	from := 2 * g.step
	until := from + roundUp(forDur, g.step) + 4*g.step
	sc := scenario{name: "a hold past the maximum for longer than for: fires and resolves", tl: g.timelineTo(until + g.step)}
	type actor struct {
		name          string
		from, until   time.Duration
		inApplication bool // the hold is seen by the library, not the exporter
		declared      bool
		fires         bool
	}
	actors := []actor{
		{"stuck", from, until, false, true, true},
		{"stuck-in-application", from, until, true, true, true},
		{"within-maximum", 0, 0, false, true, false},
		{"undeclared", 0, until + g.step, false, false, false},
	}
	if blip := blipLength(forDur, g.step); blip > 0 {
		actors = append(actors, actor{"blip", from, from + blip, false, true, false})
	}
	for _, a := range actors {
		exp := g.expLabels(1, "exporter-1:9360", a.name)
		if a.declared {
			sc.add("lock_expected_max_hold_seconds", exp, sc.tl.gauge(maxHold, maxHold, 0, 0))
		}
		if a.inApplication {
			// The two sides meet by namespace: the application's series names the namespace
			// as the exporter's does.
			lib := g.libLabels(exp["lock_namespace"])
			if lib["lock_namespace"] != exp["lock_namespace"] {
				continue // the two selectors admit no common namespace name
			}
			sc.add("lock_key_held_max_seconds", exp, sc.tl.gauge(short, short, 0, 0))
			sc.add("lock_held_oldest_seconds", lib, sc.tl.gauge(short, 2*maxHold, a.from, a.until))
		} else {
			sc.add("lock_key_held_max_seconds", exp, sc.tl.gauge(short, 2*maxHold, a.from, a.until))
		}
		holds := never
		if a.fires {
			holds = span{from: a.from, surelyFrom: a.from, surelyUntil: a.until, until: a.until}
		}
		keepNames := append(append([]string{}, g.cfg.ClusterLabels...), "lock_namespace")
		sc.expect = append(sc.expect, expected{alert: rules.AlertHeldTooLong, labels: keep(exp, c.Severity, keepNames...),
			holds: holds, forDur: forDur, value: 2 * maxHold})
	}
	for _, lbls := range g.expUnselected(1, "exporter-1:9360", "unselected") {
		sc.add("lock_expected_max_hold_seconds", lbls, sc.tl.gauge(maxHold, maxHold, 0, 0))
		sc.add("lock_key_held_max_seconds", lbls, sc.tl.gauge(short, 2*maxHold, from, until))
	}
	return []scenario{sc}
}
