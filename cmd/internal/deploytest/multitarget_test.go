package deploytest

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// multiTargetExamples returns the multi-target scrape configurations the repository shows: the
// commented job of prometheus.yml (uncommented) and the example of docs/exporter.md, each a whole
// Prometheus configuration, with the exporter address each should send requests to.
func multiTargetExamples(t *testing.T) map[string]struct{ config, exporter string } {
	t.Helper()
	root := testkit.RepoRoot(t)
	prom, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(prom), "# multi-target job begins\n")
	block, _, ok2 := strings.Cut(rest, "# multi-target job ends")
	if !ok || !ok2 {
		t.Fatal("prometheus.yml: the commented multi-target job's markers are missing")
	}
	var job strings.Builder
	for _, line := range strings.Split(strings.TrimRight(block, " \n"), "\n") {
		job.WriteString(strings.Replace(line, "# ", "", 1) + "\n")
	}

	doc, err := os.ReadFile(filepath.Join(root, "docs", "exporter.md"))
	if err != nil {
		t.Fatal(err)
	}
	var docConfig string
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		code, _, _ := strings.Cut(part, "```")
		if strings.Contains(code, "metrics_path: /scrape") {
			docConfig = code
		}
	}
	if docConfig == "" {
		t.Fatal("docs/exporter.md: no scrape configuration with metrics_path: /scrape")
	}
	return map[string]struct{ config, exporter string }{
		"prometheus.yml":   {"scrape_configs:\n" + job.String(), "localhost:9866"},
		"docs/exporter.md": {docConfig, "lock-exporter:9866"},
	}
}

// TestMultiTargetScrapeConfig checks the documented multi-target scrape configurations with
// promtool, then runs their relabelling as Prometheus does: every listed name must become a
// request for /scrape?target=NAME on the exporter, with the name as the instance label.
func TestMultiTargetScrapeConfig(t *testing.T) {
	for name, ex := range multiTargetExamples(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prometheus.yml")
			if err := os.WriteFile(path, []byte(ex.config), 0o600); err != nil {
				t.Fatal(err)
			}
			testkit.RunTool(t, "promtool", "check", "config", path)

			var cfg struct {
				ScrapeConfigs []struct {
					JobName       string `yaml:"job_name"`
					MetricsPath   string `yaml:"metrics_path"`
					StaticConfigs []struct {
						Targets []string `yaml:"targets"`
					} `yaml:"static_configs"`
					RelabelConfigs []*relabel.Config `yaml:"relabel_configs"`
				} `yaml:"scrape_configs"`
			}
			if err := yaml.Unmarshal([]byte(ex.config), &cfg); err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, sc := range cfg.ScrapeConfigs {
				if sc.MetricsPath != "/scrape" {
					continue
				}
				for _, rc := range sc.RelabelConfigs {
					// As Prometheus does on loading: sets the label name scheme the rule uses.
					if err := rc.Validate(model.UTF8Validation); err != nil {
						t.Fatal(err)
					}
				}
				for _, group := range sc.StaticConfigs {
					for _, target := range group.Targets {
						found++
						lb := labels.NewBuilder(labels.FromStrings("__address__", target, "job", sc.JobName,
							"__metrics_path__", sc.MetricsPath, "__scheme__", "http"))
						if !relabel.ProcessBuilder(lb, sc.RelabelConfigs...) {
							t.Fatalf("target %s dropped by relabelling", target)
						}
						l := lb.Labels()
						u := url.URL{Scheme: l.Get("__scheme__"), Host: l.Get("__address__"), Path: l.Get("__metrics_path__"),
							RawQuery: url.Values{"target": {l.Get("__param_target")}}.Encode()}
						want := "http://" + ex.exporter + "/scrape?" + url.Values{"target": {target}}.Encode()
						if u.String() != want || l.Get("instance") != target {
							t.Errorf("target %s: scraped as %s with instance %q; want %s with instance %q", target, u.String(), l.Get("instance"), want, target)
						}
					}
				}
			}
			if found < 2 {
				t.Errorf("%d /scrape targets in the example, want at least 2", found)
			}
		})
	}
}
