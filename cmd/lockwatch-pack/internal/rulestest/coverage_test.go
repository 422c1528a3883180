package rulestest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// unitTestFile is the part of promtool's test-file format this test reads.
type unitTestFile struct {
	Tests []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  model.Duration `yaml:"eval_time"`
			Alertname string         `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestEveryAlertTierIsCovered checks the shape of the promtool tests: for every alert rule (an
// alert and severity pair, so each tier of a multi-window alert counts on its own) some test
// expects it firing with all its annotations, some test at an earlier time of the same run
// expects it silent (the for: duration is honoured), and some later one expects it silent
// again (it resolves).
func TestEveryAlertTierIsCovered(t *testing.T) {
	type key struct{ alert, severity string }
	type run struct{ firing, silent []model.Duration }
	runs := map[key]map[string]*run{} // alert tier -> test-group (file + name) -> eval times

	root := testkit.RepoRoot(t)
	for _, path := range testFiles(t, filepath.Join(root, "rules_test")) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f unitTestFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, tg := range f.Tests {
			group := filepath.Base(path) + ": " + tg.Name
			for _, at := range tg.AlertRuleTest {
				firing := map[string]bool{}
				for _, ea := range at.ExpAlerts {
					firing[ea.ExpLabels["severity"]] = true
					if len(ea.ExpAnnotations) != 3 {
						t.Errorf("%s at %s: %s expected without its three annotations", group, at.EvalTime, at.Alertname)
					}
				}
				for _, sev := range []string{"critical", "warning", "info"} {
					k := key{at.Alertname, sev}
					if runs[k] == nil {
						runs[k] = map[string]*run{}
					}
					if runs[k][group] == nil {
						runs[k][group] = &run{}
					}
					r := runs[k][group]
					if firing[sev] {
						r.firing = append(r.firing, at.EvalTime)
					} else {
						r.silent = append(r.silent, at.EvalTime)
					}
				}
			}
		}
	}

	files, err := rules.Build(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	for r := range rules.All(files) {
		if r.Alert == "" {
			continue
		}
		k := key{r.Alert, r.Labels["severity"]}
		covered := false
		for _, rn := range runs[k] {
			if len(rn.firing) == 0 || len(rn.silent) == 0 {
				continue
			}
			first := slices.Min(rn.firing)
			if slices.Min(rn.silent) < first && slices.Max(rn.silent) > first {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s (%s): no promtool test run expects it silent, then firing, then silent again", k.alert, k.severity)
		}
	}
}
