package manifests

import (
	"bytes"
	"errors"
	"io"
	"path"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// generate renders the manifests for cfg, keyed by file name inside Dir.
func generate(t *testing.T, cfg packconfig.Config) map[string][]byte {
	t.Helper()
	files, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		if path.Dir(f.Path) != Dir {
			t.Errorf("%s is not under %s/", f.Path, Dir)
		}
		byName[path.Base(f.Path)] = f.Data
	}
	if len(byName) != 5 {
		t.Fatalf("generated %d files, want 5: the PrometheusRule, the dashboards and the three static manifests", len(byName))
	}
	return byName
}

// overrides is a configuration different from the default in windows, for: and a threshold, so
// the embedding is checked on more than one input.
const overrides = `
alerts:
  abandonments:
    long: 2m
    short: 30s
    for: 1m
  key_without_ttl:
    for: 30s
  wait_p99:
    threshold_seconds: 2.5
dashboards:
  refresh: 30s
`

func configs(t *testing.T) map[string]packconfig.Config {
	t.Helper()
	over, err := packconfig.Parse([]byte(overrides))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]packconfig.Config{"default": packconfig.Default(), "overrides": over}
}

// TestPrometheusRuleEmbedsThePack compares, as parsed YAML, the PrometheusRule's groups with
// the groups of the rule files the same configuration generates.
func TestPrometheusRuleEmbedsThePack(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			files := generate(t, cfg)
			var rule struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
				Spec       struct {
					Groups []any `yaml:"groups"`
				} `yaml:"spec"`
			}
			if err := strictDecode(files[PrometheusRuleFile], &rule); err != nil {
				t.Fatalf("PrometheusRule does not parse: %v", err)
			}
			if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
				t.Errorf("object is %s %s", rule.APIVersion, rule.Kind)
			}
			ruleFiles, err := rules.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var want []any
			for _, r := range ruleFiles {
				var f struct {
					Groups []any `yaml:"groups"`
				}
				if err := strictDecode(r.Data, &f); err != nil {
					t.Fatal(err)
				}
				want = append(want, f.Groups...)
			}
			if len(want) == 0 || !reflect.DeepEqual(rule.Spec.Groups, want) {
				t.Errorf("PrometheusRule groups differ from alerts/*.yml (%d vs %d groups)", len(rule.Spec.Groups), len(want))
			}
		})
	}
}

func TestDashboardConfigMapsEmbedTheDashboards(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			files := generate(t, cfg)
			boards, err := dashboards.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			boardData := map[string]string{}
			for _, b := range boards {
				boardData[path.Base(b.Path)] = string(b.Data)
			}
			dec := yaml.NewDecoder(bytes.NewReader(files[DashboardsFile]))
			dec.KnownFields(true)
			seen := map[string]bool{}
			for {
				var cm configMap
				if err := dec.Decode(&cm); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					t.Fatal(err)
				}
				if cm.Kind != "ConfigMap" || cm.Metadata.Labels[dashboardLabel] != "1" {
					t.Errorf("%s: kind %s, labels %v: want a ConfigMap labelled %s: \"1\"", cm.Metadata.Name, cm.Kind, cm.Metadata.Labels, dashboardLabel)
				}
				if len(cm.Data) != 1 {
					t.Errorf("%s holds %d files, want 1", cm.Metadata.Name, len(cm.Data))
				}
				for file, content := range cm.Data {
					if content != boardData[file] {
						t.Errorf("%s: %s differs from the generated dashboard", cm.Metadata.Name, file)
					}
					seen[file] = true
				}
			}
			if len(seen) != len(boards) {
				t.Errorf("ConfigMaps hold %d dashboards, the pack has %d", len(seen), len(boards))
			}
		})
	}
}

func TestGroupsTextRejectsAFileWithoutGroups(t *testing.T) {
	if _, err := groupsText([]byte("rules: []\n")); err == nil {
		t.Error("a rule file without groups was accepted")
	}
}

func strictDecode(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	return dec.Decode(v)
}
