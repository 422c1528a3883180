package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Generate is the rules' pack.Generator: the rule files for cfg, rendered, under Dir.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	files, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	return Render(files)
}

// Build returns the rule files for cfg, unrendered so tests can inspect (or weaken) single rules:
// the recording rules, then the alerts.
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

// where names the deployment an alert fired in, for descriptions: " In cluster eu1, region
// west." with every cluster label the alert carries. A label it does not carry is left out of
// the sentence, and the sentence out when it carries none: the absent() arm of
// LockExporterAbsent has no labels, and a target may lack one. Empty without cluster labels.
func (b builder) where() string {
	if len(b.cfg.ClusterLabels) == 0 {
		return ""
	}
	var present, parts []string
	for i, l := range b.cfg.ClusterLabels {
		label := "$labels." + l
		comma := ""
		if i > 0 {
			comma = fmt.Sprintf("{{ if or %s }},{{ end }}", strings.Join(present, " "))
		}
		parts = append(parts, fmt.Sprintf("{{ with %s }}%s %s {{ . }}{{ end }}", label, comma, l))
		present = append(present, label)
	}
	return fmt.Sprintf("{{ if or %s }} In%s.{{ end }}", strings.Join(present, " "), strings.Join(parts, ""))
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

// num renders a number the way a person would write it in PromQL.
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
