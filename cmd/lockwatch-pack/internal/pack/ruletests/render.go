package ruletests

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
)

// The parts of promtool's test-file format the generated files use.
type (
	testFile struct {
		RuleFiles          []string    `yaml:"rule_files"`
		EvaluationInterval string      `yaml:"evaluation_interval"`
		GroupEvalOrder     []string    `yaml:"group_eval_order"`
		Tests              []testGroup `yaml:"tests"`
	}
	testGroup struct {
		Name          string        `yaml:"name"`
		Interval      string        `yaml:"interval"`
		InputSeries   []seriesEntry `yaml:"input_series"`
		AlertRuleTest []alertTest   `yaml:"alert_rule_test"`
	}
	seriesEntry struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	alertTest struct {
		EvalTime  string     `yaml:"eval_time"`
		Alertname string     `yaml:"alertname"`
		ExpAlerts []expAlert `yaml:"exp_alerts"`
	}
	expAlert struct {
		ExpLabels      map[string]string `yaml:"exp_labels"`
		ExpAnnotations map[string]string `yaml:"exp_annotations"`
	}
)

// render writes one alert's test file. The rule files are found relative to it, as promtool
// resolves them, so the directory the pack was written to can be moved as a whole.
func (g *gen) render(alert string, disabled bool, scenarios []scenario) ([]byte, error) {
	f := testFile{
		RuleFiles:          []string{"../" + rules.RecordingFile, "../" + rules.AlertingFile},
		EvaluationInterval: model.Duration(g.step).String(),
		GroupEvalOrder:     g.groupOrder(),
	}
	for _, sc := range scenarios {
		tg, err := g.testGroup(alert, disabled, sc)
		if err != nil {
			return nil, err
		}
		f.Tests = append(f.Tests, tg)
	}
	var buf bytes.Buffer
	buf.WriteString(pack.HashNotice())
	fmt.Fprintf(&buf, "# promtool unit tests of %s for this pack's configuration. Run them with\n# \"lockwatch-pack test\" or \"promtool test rules %s/*_test.yml\".\n", alert, Dir)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// groupOrder evaluates the recording rules before the alerts that read them, as Prometheus
// does over time, so an alert does not lag its recording rule by one evaluation in the test.
func (g *gen) groupOrder() []string {
	var names []string
	for _, f := range g.built {
		for _, gr := range f.Groups {
			names = append(names, gr.Name)
		}
	}
	return names
}

func (g *gen) testGroup(alert string, disabled bool, sc scenario) (testGroup, error) {
	tg := testGroup{Name: sc.name, Interval: model.Duration(sc.tl.step).String()}
	for _, s := range sc.series {
		tg.InputSeries = append(tg.InputSeries, seriesEntry{Series: s.String(), Values: s.values.String()})
	}
	for _, t := range evalTimes(sc.expect, sc.tl.step, sc.tl.end()) {
		at := alertTest{EvalTime: model.Duration(t).String(), Alertname: alert, ExpAlerts: []expAlert{}}
		for _, e := range sc.expect {
			if disabled || e.state(t) != firing {
				continue
			}
			ann, err := g.annotations(e)
			if err != nil {
				return testGroup{}, err
			}
			at.ExpAlerts = append(at.ExpAlerts, expAlert{ExpLabels: e.labels, ExpAnnotations: ann})
		}
		tg.AlertRuleTest = append(tg.AlertRuleTest, at)
	}
	return tg, nil
}

// annotations are what a user sees on the alert: the rule's summary, its description rendered
// with the alert's labels and value, and the runbook link the configuration's base URL gives.
func (g *gen) annotations(e expected) (map[string]string, error) {
	r, ok := g.rule(e.alert, e.labels["severity"])
	if !ok {
		return nil, fmt.Errorf("no %s rule of severity %s", e.alert, e.labels["severity"])
	}
	desc, err := expandDescription(r.Annotations.Description, e.labels, e.value)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"summary":     r.Annotations.Summary,
		"description": desc,
		"runbook_url": g.cfg.RunbookBaseURL + "#" + strings.ToLower(e.alert),
	}, nil
}

func (g *gen) rule(alert, severity string) (rules.Rule, bool) {
	for r := range rules.All(g.built) {
		if r.Alert == alert && r.Labels["severity"] == severity {
			return *r, true
		}
	}
	return rules.Rule{}, false
}
