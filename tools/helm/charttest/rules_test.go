package charttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestRulesEqualThePack: the PrometheusRule the chart renders holds exactly the groups of the
// pack's rule files, for the committed pack (alerts/) and for a pack generated with other
// settings by lockwatch-pack --out, whose chart is then rendered in turn. So the chart has no
// rule text of its own: what the pack settings say is what the chart deploys.
func TestRulesEqualThePack(t *testing.T) {
	t.Run("committed pack", func(t *testing.T) {
		checkRules(t, repoRoot(t), chartDir)
	})
	t.Run("other pack settings", func(t *testing.T) {
		out := t.TempDir()
		overrides := filepath.Join(t.TempDir(), "my-pack.yml")
		if err := os.WriteFile(overrides, []byte(`cluster_labels: [cluster]
runbook_base_url: https://runbooks.example.com/lockwatch.md
selectors:
  exporter: 'job="lock-exporter"'
alerts:
  key_without_ttl: {for: 30m}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "run", "./cmd/lockwatch-pack", "--config", overrides, "--out", out)
		cmd.Dir = repoRoot(t)
		// lockwatch-pack is a module of the repository's workspace (go.work), built through it
		// whatever GOWORK this test runs with.
		cmd.Env = append(os.Environ(), "GOWORK=")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lockwatch-pack: %v\n%s", err, msg)
		}
		groups := checkRules(t, out, filepath.Join(out, chartDir))
		if reflect.DeepEqual(groups, packGroups(t, repoRoot(t))) {
			t.Fatal("the overrides changed no rule: the test proves nothing")
		}
	})
}

// checkRules renders the chart at dir with the PrometheusRule on and compares its groups with
// the rule files under root/alerts, as data; it returns them.
func checkRules(t *testing.T, root, dir string) []any {
	t.Helper()
	r := renderDecoded(t, dir, writeValues(t, "prometheusRule: {enabled: true}\n"))
	if len(r.rules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(r.rules))
	}
	// Through JSON, so the typed groups (the operator's RuleGroup) and the files' groups compare
	// as the same plain data.
	data, err := json.Marshal(r.rules[0].Spec.Groups)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []any
	if err := json.Unmarshal(data, &rendered); err != nil {
		t.Fatal(err)
	}
	want := packGroups(t, root)
	if !reflect.DeepEqual(rendered, want) {
		got, _ := json.MarshalIndent(rendered, "", " ")
		exp, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("the chart's rules differ from %s/alerts:\n%s", root, firstDifference(string(got), string(exp)))
	}
	return rendered
}

// packGroups is the groups of root/alerts/*.yml in file-name order, the order the chart's
// template reads its files/rules in.
func packGroups(t *testing.T, root string) []any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "alerts", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files under %s/alerts (%v)", root, err)
	}
	var groups []any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Groups []any `json:"groups"`
		}
		if err := yaml.UnmarshalStrict(data, &file); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		groups = append(groups, file.Groups...)
	}
	return groups
}
