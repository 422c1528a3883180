package ruletests

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// customised is a pack configuration unlike the defaults in everything the tests follow.
const customised = `
cluster_labels: [cluster, region]
selectors:
  library: 'job=~"workers|schedulers"'
  exporter: 'job="lockwatch-exporter", env!="dev"'
runbook_base_url: https://wiki.example.com/runbooks/locks
alerts:
  not_owned_ratio: {min_operations: 50, fast: {threshold: 0.2, for: 3m}, slow: {threshold: 0.03}}
  renewal_failure_ratio: {fast: {threshold: 0.25, long: 30m, short: 2m}}
  abandonments: {min_count: 3, for: 20m}
  wait_p99: {threshold_seconds: 0.25, min_acquires: 40}
  fenced_write_rejection_ratio: {threshold: 0.1, min_events: 10}
  key_without_ttl: {for: 3m, severity: critical}
  renewal_stalled: {factor: 3}
  exporter_absent: {for: 4m}
  held_too_long: {for: 7m}
  lapse_ratio: {threshold: 0.2}
  takeover_ratio: {threshold: 0.02, min_events: 5}
  exporter_keys_truncated: {disabled: true}
`

// TestEveryAlertTierIsShown checks the generated tests for the default and a customised pack:
// every enabled alert rule (alert and severity) is expected silent, then firing with its three
// annotations, then silent again in one test group; a disabled alert keeps its file and is
// never expected to fire; every annotation is rendered (no template left, no cluster label
// rendered empty) with the configured runbook URL.
func TestEveryAlertTierIsShown(t *testing.T) {
	for _, tt := range []struct{ name, overrides string }{{"default", ""}, {"customised", customised}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := packconfig.Parse([]byte(tt.overrides))
			if err != nil {
				t.Fatal(err)
			}
			files, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			shown := map[string]bool{} // alert/severity
			fired := map[string]bool{} // alert
			for _, f := range files {
				var tf testFile
				if err := yaml.Unmarshal(f.Data, &tf); err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				for _, tg := range tf.Tests {
					for key := range shownIn(t, cfg, tg) {
						shown[key] = true
						fired[strings.Split(key, "/")[0]] = true
					}
				}
				if path.Dir(f.Path) != Dir {
					t.Errorf("%s is not in %s", f.Path, Dir)
				}
			}
			built, err := rules.Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for r := range rules.All(built) {
				if key := r.Alert + "/" + r.Labels["severity"]; r.Alert != "" && !shown[key] {
					t.Errorf("%s: no test group expects it silent, then firing, then silent", key)
				}
			}
			if want := len((&gen{cfg: cfg}).alerts()); len(files) != want {
				t.Errorf("%d test files, want %d: one per alert", len(files), want)
			}
			if tt.name == "customised" && fired[rules.AlertExporterKeysTruncated] {
				t.Errorf("the disabled %s is expected to fire", rules.AlertExporterKeysTruncated)
			}
		})
	}
}

// shownIn returns the alert/severity keys a test group expects silent, then firing, then
// silent, checking each expected alert's annotations on the way.
func shownIn(t *testing.T, cfg packconfig.Config, tg testGroup) map[string]bool {
	t.Helper()
	type run struct{ firing, silent []model.Duration }
	runs := map[string]*run{}
	for _, at := range tg.AlertRuleTest {
		at := at
		et, err := model.ParseDuration(at.EvalTime)
		if err != nil {
			t.Fatal(err)
		}
		firing := map[string]bool{}
		for _, ea := range at.ExpAlerts {
			firing[ea.ExpLabels["severity"]] = true
			checkAnnotations(t, cfg, at.Alertname, ea.ExpAnnotations)
		}
		for _, sev := range []string{"critical", "warning", "info"} {
			key := at.Alertname + "/" + sev
			if runs[key] == nil {
				runs[key] = &run{}
			}
			if firing[sev] {
				runs[key].firing = append(runs[key].firing, et)
			} else {
				runs[key].silent = append(runs[key].silent, et)
			}
		}
	}
	shown := map[string]bool{}
	for key, r := range runs {
		if len(r.firing) > 0 && len(r.silent) > 0 {
			first := slices.Min(r.firing)
			shown[key] = slices.Min(r.silent) < first && slices.Max(r.silent) > first
		}
	}
	return shown
}

func checkAnnotations(t *testing.T, cfg packconfig.Config, alert string, ann map[string]string) {
	t.Helper()
	if len(ann) != 3 || ann["summary"] == "" || ann["description"] == "" {
		t.Errorf("%s expected without its three annotations: %v", alert, ann)
	}
	if want := cfg.RunbookBaseURL + "#" + strings.ToLower(alert); ann["runbook_url"] != want {
		t.Errorf("%s: runbook_url %q, want %q", alert, ann["runbook_url"], want)
	}
	if strings.Contains(ann["description"], "{{") {
		t.Errorf("%s: description not rendered: %s", alert, ann["description"])
	}
	for _, l := range cfg.ClusterLabels {
		if strings.Contains(ann["description"], " "+l+" ,") || strings.Contains(ann["description"], " "+l+" .") {
			t.Errorf("%s: description renders %s empty: %s", alert, l, ann["description"])
		}
	}
}

// TestSelectorsNoScenarioCanSatisfy: a configuration whose selectors leave an alert nothing to
// read is refused with one line naming the selector, not given tests that cannot pass.
func TestSelectorsNoScenarioCanSatisfy(t *testing.T) {
	tests := []struct {
		overrides string
		want      string
	}{
		{"selectors:\n  exporter: 'job=\"a\", job=\"b\"'\n", "selectors.exporter: no label value found for label job"},
		{"selectors:\n  library: 'env=\"\", env!=\"\"'\n", "selectors.library: no label value found for label env"},
		{"selectors:\n  exporter: 'lock_namespace=~\"billing:.*\"'\n", "selectors.exporter: no label value found for the exporter's own series"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			cfg, err := packconfig.Parse([]byte(tt.overrides))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Generate(cfg)
			if !errors.Is(err, ErrNoLabelValue) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want one line with %q", err, tt.want)
			}
		})
	}
}
