package packconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default() does not validate: %v", err)
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, in := range []string{"", "\n", "# only a comment\n", "{}\n"} {
		cfg, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("Parse(%q) differs from Default()", in)
		}
	}
}

func TestParseOverridesOnlyGivenKeys(t *testing.T) {
	cfg, err := Parse([]byte(`
selectors:
  exporter: job="lock-exporter"
recording_windows: [2m, 10m]
cluster_labels: [cluster, region]
alerts:
  not_owned_ratio:
    fast:
      threshold: 0.2
  key_without_ttl:
    disabled: true
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Selectors.Exporter = `job="lock-exporter"`
	want.RecordingWindows = []model.Duration{model.Duration(2 * 60e9), model.Duration(10 * 60e9)}
	want.ClusterLabels = []string{"cluster", "region"}
	want.Alerts.NotOwnedRatio.Fast.Threshold = 0.2
	want.Alerts.KeyWithoutTTL.Disabled = true
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"unknown top-level key", "selector: {}\n", "selector (line 1): unknown key"},
		{"unknown nested key", "alerts:\n  not_owned_ratio:\n    fast:\n      treshold: 0.1\n", "alerts.not_owned_ratio.fast.treshold (line 4): unknown key"},
		{"bad duration", "alerts:\n  wait_p99:\n    for: soon\n", `alerts.wait_p99.for (line 3): "soon" is not a duration`},
		{"bad selector", "selectors:\n  library: job=\n", "selectors.library (line 2): "},
		{"name matcher", "selectors:\n  exporter: __name__=\"up\"\n", "selectors.exporter (line 2): "},
		// Labels the pack's own queries group or filter by: a matcher on one leaves the ratios,
		// quantiles and top-K panels reading part of a family, or nothing.
		{"outcome matcher", "selectors:\n  library: job=\"w\", outcome=\"ok\"\n", "selectors.library (line 2): "},
		{"le matcher", "selectors:\n  library: le!=\"+Inf\"\n", "selectors.library (line 2): "},
		{"key matcher", "selectors:\n  exporter: key=~\"jobs:.*\"\n", "selectors.exporter (line 2): "},
		{"relative runbook", "runbook_base_url: docs/runbook.md\n", "runbook_base_url (line 1): "},
		{"runbook with fragment", "runbook_base_url: https://x.example/r.md#a\n", "runbook_base_url"},
		{"no windows", "recording_windows: []\n", "recording_windows"},
		{"bad severity", "alerts:\n  exporter_absent:\n    severity: page\n", "alerts.exporter_absent.severity (line 3): "},
		{"ratio above one", "alerts:\n  renewal_failure_ratio:\n    slow:\n      threshold: 5\n", "alerts.renewal_failure_ratio.slow.threshold (line 4): "},
		{"short not shorter", "alerts:\n  not_owned_ratio:\n    fast:\n      short: 1h\n", "alerts.not_owned_ratio.fast.long (line 4): "},
		{"burst-prone abandonment for", "alerts:\n  abandonments:\n    for: 5m\n", "alerts.abandonments.for (line 3): "},
		{"burst-prone lapse for", "alerts:\n  lapse_ratio:\n    for: 5m\n", "alerts.lapse_ratio.for (line 3): "},
		{"takeover ratio above one", "alerts:\n  takeover_ratio:\n    threshold: 1.5\n", "alerts.takeover_ratio.threshold (line 3): "},
		{"burst-prone fenced-write for", "alerts:\n  fenced_write_rejection_ratio:\n    for: 5m\n", "alerts.fenced_write_rejection_ratio.for (line 3): "},
		{"negative lapse guard", "alerts:\n  lapse_ratio:\n    min_events: -1\n", "alerts.lapse_ratio.min_events (line 3): "},
		{"wait threshold", "alerts:\n  wait_p99:\n    threshold_seconds: 0\n", "alerts.wait_p99.threshold_seconds (line 3): "},
		{"stalled factor", "alerts:\n  renewal_stalled:\n    factor: 0.5\n", "alerts.renewal_stalled.factor (line 3): "},
		{"bad cluster label", "cluster_labels: [cluster-name]\n", `cluster_labels[0] (line 1): "cluster-name" is not a Prometheus label name`},
		{"reserved cluster label", "cluster_labels:\n  - cluster\n  - job\n", `cluster_labels[1] (line 3): "job" is a label the pack already uses`},
		{"duplicate cluster label", "cluster_labels: [cluster, cluster]\n", `cluster_labels[1] (line 1): "cluster" is listed twice`},
		{"internal cluster label", "cluster_labels: [__name__]\n", `cluster_labels[0]`},
		{"two documents", "alerts: {}\n---\nalerts: {}\n", "more than one YAML document"},
		{"key given twice", "alerts:\n  wait_p99:\n    for: 5m\n    for: 10m\n", "alerts.wait_p99.for (line 4): key given twice (first at line 3)"},
		{"section given twice", "alerts:\n  wait_p99: {for: 5m}\nalerts: {}\n", "alerts (line 3): key given twice (first at line 1)"},
		{"not a mapping", "- a\n", "the top level (line 1): a list is not a mapping"},
		// .nan and .inf are YAML floats: a NaN threshold or guard compares false with everything, so
		// the alert would load and never fire; an infinite one renders no dashboard.
		{"NaN guard", "alerts:\n  wait_p99:\n    min_acquires: .nan\n", `alerts.wait_p99.min_acquires (line 3): ".nan" is not a finite number`},
		{"infinite guard", "alerts:\n  not_owned_ratio:\n    min_operations: .inf\n", `alerts.not_owned_ratio.min_operations (line 3): ".inf" is not a finite number`},
		{"NaN factor", "alerts:\n  renewal_stalled:\n    factor: .NaN\n", `alerts.renewal_stalled.factor (line 3): ".NaN" is not a finite number`},
		{"infinite wait threshold", "alerts:\n  wait_p99:\n    threshold_seconds: .inf\n", `alerts.wait_p99.threshold_seconds (line 3): ".inf" is not a finite number`},
		{"infinite min_count", "alerts:\n  abandonments:\n    min_count: -.Inf\n", `alerts.abandonments.min_count (line 3): "-.Inf" is not a finite number`},
		// An empty fragment still leaves the "#": every runbook_url would end in "##anchor".
		// A space ends the link wherever the alert is shown (Slack, PagerDuty, e-mail): the
		// on-call engineer would follow half a URL.
		{"runbook with a space", "runbook_base_url: https://wiki.example/Lock Runbook\n", "runbook_base_url (line 1): "},
		{"runbook with a tab", "runbook_base_url: \"https://wiki.example/a\\tb\"\n", "runbook_base_url (line 1): "},
		{"runbook with empty fragment", "runbook_base_url: https://x.example/r.md#\n", "runbook_base_url (line 1): "},
		// time.LoadLocation accepts "Local" (the machine's zone), which Grafana does not know.
		{"Local timezone", "dashboards:\n  timezone: Local\n", "dashboards.timezone (line 2): "},
		// A rate over less than a second holds no two samples: every rule on it is empty and
		// its alert never fires ("5ms" written for "5m").
		{"millisecond recording window", "recording_windows: [5m, 30ms]\n", "recording_windows[1] (line 1): "},
		{"millisecond short window", "alerts:\n  wait_p99:\n    short: 5ms\n", "alerts.wait_p99.short (line 3): "},
		{"millisecond long window", "alerts:\n  abandonments:\n    long: 1500ms\n    short: 1s\n    for: 5m\n", "alerts.abandonments.long (line 3): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.in)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	cfg := Default()
	cfg.Alerts.WaitP99.ThresholdSeconds = 2.5
	cfg.Selectors.Library = `job=~"workers|schedulers"`
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(YAML()): %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip changed the config:\n%s", out)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pack.yaml")
	if err := os.WriteFile(path, []byte("alerts:\n  exporter_absent:\n    for: 20m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Alerts.ExporterAbsent.For.String(); got != "20m" {
		t.Errorf("exporter_absent.for = %s, want 20m", got)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("alerts:\n  nope: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Load error %v does not name the file", err)
	}
}
