package helmchart

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestVersionIsTheRelease: the chart is cut with the release in VERSION, as its appVersion (the
// image tag) and, without the "v", its chart version.
func TestVersionIsTheRelease(t *testing.T) {
	release, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Version, strings.TrimSpace(string(release)); got != want {
		t.Errorf("helmchart.Version = %q, VERSION = %q: bump them together", got, want)
	}
	chart := string(chartYAML(Version))
	for _, want := range []string{"\nversion: " + strings.TrimPrefix(Version, "v") + "\n", "\nappVersion: \"" + Version + "\"\n"} {
		if !strings.Contains(chart, want) {
			t.Errorf("Chart.yaml lacks %q:\n%s", want, chart)
		}
	}
}

// TestGenerateWritesAWholeChart: the files Helm needs are there, including the ones embed
// leaves out without "all:" (_helpers.tpl, .helmignore), and the chart's rules are the rules
// package's output for the same configuration, byte for byte, also for non-default settings.
func TestGenerateWritesAWholeChart(t *testing.T) {
	cfg := packconfig.Default()
	cfg.RunbookBaseURL = "https://runbooks.example.com/lockwatch.md"
	cfg.ClusterLabels = []string{"cluster"}
	files, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	for _, want := range []string{"Chart.yaml", "values.yaml", "values.schema.json", ".helmignore",
		"templates/_helpers.tpl", "templates/deployment.yaml", "templates/prometheusrule.yaml",
		"files/dashboards/lockwatch-overview.json"} {
		if _, ok := byPath[Dir+"/"+want]; !ok {
			t.Errorf("Generate writes no %s/%s", Dir, want)
		}
	}
	ruleFiles, err := rules.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ruleFiles {
		got := byPath[Dir+"/"+RulesDir+"/"+path.Base(r.Path)]
		if !bytes.Equal(got, r.Data) {
			t.Errorf("the chart's %s differs from the rules package's", path.Base(r.Path))
		}
		if !bytes.Contains(got, []byte("runbooks.example.com")) && strings.HasSuffix(r.Path, rules.AlertingFile) {
			t.Errorf("the chart's alerts do not carry the configured runbook URL")
		}
	}
	if _, err := pack.Generate(cfg, Generate); err != nil {
		t.Errorf("pack.Generate refuses the chart's files: %v", err)
	}
}
