package rules

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// alertSpec is an alert before its expression is parsed.
type alertSpec struct {
	name, expr, severity string
	forDur               model.Duration
	summary, description string
}

// alertGroups returns the alerts on the lease library's metrics and those on the exporter's, as
// two groups: they come from different scrape jobs and are often routed to different teams. A
// group whose alerts are all disabled is left out.
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
			r, err := b.alertRule(s)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		}
		if len(rules) > 0 {
			groups = append(groups, Group{Name: g.name, Rules: rules})
		}
	}
	return groups, nil
}

// alertRule parses an alert's expression and adds what every alert carries: its severity label,
// the deployment it fired in and the link to its runbook section.
func (b builder) alertRule(s alertSpec) (Rule, error) {
	e, err := parse(s.name, s.expr)
	if err != nil {
		return Rule{}, err
	}
	return Rule{
		Alert:  s.name,
		Expr:   e,
		For:    s.forDur,
		Labels: map[string]string{"severity": s.severity},
		Annotations: Annotations{
			Summary:     s.summary,
			Description: s.description + b.where(),
			RunbookURL:  b.cfg.RunbookBaseURL + "#" + strings.ToLower(s.name),
		},
	}, nil
}

// tuned applies an alert's settings to it: nothing when it is disabled, else the alert with its
// severity and for: duration.
func tuned(c packconfig.SimpleAlert, s alertSpec) []alertSpec {
	if c.Disabled {
		return nil
	}
	s.severity, s.forDur = c.Severity, c.For
	return []alertSpec{s}
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
// 250ms. A threshold time.Duration cannot hold, past its 292 years or not a whole number of
// nanoseconds, is written as seconds (1e+12s): converted, it would overflow or read as 0s.
func humanSeconds(s float64) string {
	ns := s * float64(time.Second)
	if ns < 1 || ns >= math.MaxInt64 || ns != math.Trunc(ns) {
		return strconv.FormatFloat(s, 'g', -1, 64) + "s"
	}
	return time.Duration(ns).String()
}
