package alerts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/lockwatch/lockwatch/internal/packconfig"
)

// RuleFile is one generated Prometheus rule file.
type RuleFile struct {
	Name   string // file name inside alerts/
	Groups []Group
}

// Group is a Prometheus rule group.
type Group struct {
	Name  string
	Rules []Rule
}

// Rule is a recording rule (Record set) or an alerting rule (Alert set).
type Rule struct {
	Record      string
	Alert       string
	Expr        parser.Expr
	For         model.Duration
	Labels      map[string]string
	Annotations Annotations
}

// Annotations are the annotations every alert carries, in the order they are written.
type Annotations struct {
	Summary     string // static sentence ending in a period
	Description string // Go template naming the namespace (or instance) and the value
	RunbookURL  string
}

// File names of the generated rule files, relative to the alerts/ directory.
const (
	RecordingFile = "lockwatch-recording.yml"
	AlertingFile  = "lockwatch-alerts.yml"
)

// Build returns the rule files for cfg: the recording rules, then the alerts.
func Build(cfg packconfig.Config) ([]RuleFile, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := builder{cfg: cfg}
	rec, err := b.recordingGroups()
	if err != nil {
		return nil, err
	}
	al, err := b.alertGroups()
	if err != nil {
		return nil, err
	}
	return []RuleFile{{Name: RecordingFile, Groups: rec}, {Name: AlertingFile, Groups: al}}, nil
}

// builder carries the configuration through the rule constructors.
type builder struct {
	cfg packconfig.Config
}

// by is the aggregation clause of the recording rules: the cluster labels (if any), job and lock
// namespace, then extra labels such as le.
func (b builder) by(extra ...string) string {
	labels := append(slices.Clone(b.cfg.ClusterLabels), "job", "lock_namespace")
	return "by (" + strings.Join(append(labels, extra...), ", ") + ")"
}

// on is the matching clause pairing two series of one exporter target, cluster labels included
// so that two clusters' exporters with the same job and instance never pair with each other.
func (b builder) on() string {
	return "on (" + strings.Join(append(slices.Clone(b.cfg.ClusterLabels), "job", "instance"), ", ") + ")"
}

// where names the deployment an alert fired in, for descriptions; empty without cluster labels.
func (b builder) where() string {
	if len(b.cfg.ClusterLabels) == 0 {
		return ""
	}
	var parts []string
	for _, l := range b.cfg.ClusterLabels {
		parts = append(parts, fmt.Sprintf("%s {{ $labels.%s }}", l, l))
	}
	return " In " + strings.Join(parts, ", ") + "."
}

// lib returns a selector of a lease-library metric with the configured library matchers and
// extra matchers (such as outcome="failed").
func (b builder) lib(metric string, extra ...string) string {
	return selector(metric, b.cfg.Selectors.Library, extra)
}

// exp returns a selector of an exporter metric with the configured exporter matchers.
func (b builder) exp(metric string, extra ...string) string {
	return selector(metric, b.cfg.Selectors.Exporter, extra)
}

func selector(metric, configured string, extra []string) string {
	var ms []string
	if configured != "" {
		ms = append(ms, configured)
	}
	ms = append(ms, extra...)
	if len(ms) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(ms, ", ") + "}"
}

// parse parses a generated expression. Expressions are built from validated configuration, so
// a failure names the rule to make a bug in a builder obvious.
func parse(rule, expr string) (parser.Expr, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("rule %s: expression does not parse: %w", rule, err)
	}
	return e, nil
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

// num renders a number the way a person would write it in PromQL.
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
