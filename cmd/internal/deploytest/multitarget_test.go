package deploytest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// promtool, then has Prometheus's own service discovery and relabelling resolve their targets
// (promtool check service-discovery): every listed name must become a request for
// /scrape?target=NAME on the exporter, with the name as the instance label.
func TestMultiTargetScrapeConfig(t *testing.T) {
	for name, ex := range multiTargetExamples(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prometheus.yml")
			if err := os.WriteFile(path, []byte(ex.config), 0o600); err != nil {
				t.Fatal(err)
			}
			testkit.RunTool(t, "promtool", "check", "config", path)
			found := 0
			for _, job := range scrapeJobs(t, ex.config, "/scrape") {
				targets := discoverTargets(t, path, job)
				found += len(targets)
				for _, target := range targets {
					checkMultiTarget(t, target, ex.exporter)
				}
			}
			if found < 2 {
				t.Errorf("%d /scrape targets in the example, want at least 2", found)
			}
		})
	}
}

// checkMultiTarget checks that relabelling made a listed name a request for
// /scrape?target=NAME on the exporter, with the name as the instance label.
func checkMultiTarget(t *testing.T, target discoveredTarget, exporter string) {
	t.Helper()
	name, l := target.Discovered["__address__"], target.Labels
	if len(l) == 0 {
		t.Errorf("target %s dropped by relabelling", name)
		return
	}
	u := url.URL{Scheme: l["__scheme__"], Host: l["__address__"], Path: l["__metrics_path__"],
		RawQuery: url.Values{"target": {l["__param_target"]}}.Encode()}
	want := "http://" + exporter + "/scrape?" + url.Values{"target": {name}}.Encode()
	if u.String() != want || l["instance"] != name {
		t.Errorf("target %s: scraped as %s with instance %q; want %s with instance %q", name, u.String(), l["instance"], want, name)
	}
}

// scrapeJob is a job of a Prometheus configuration: its name and how many static targets it
// lists.
type scrapeJob struct {
	name    string
	targets int
}

// scrapeJobs returns the jobs of a Prometheus configuration that scrape path.
func scrapeJobs(t *testing.T, config, path string) []scrapeJob {
	t.Helper()
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	var jobs []scrapeJob
	for _, sc := range cfg.ScrapeConfigs {
		if sc.MetricsPath != path {
			continue
		}
		job := scrapeJob{name: sc.JobName}
		for _, group := range sc.StaticConfigs {
			job.targets += len(group.Targets)
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// discoveredTarget is one target of promtool's service-discovery report: its labels as
// discovered and after relabelling, which leaves none when it drops the target.
type discoveredTarget struct {
	Discovered map[string]string `json:"discoveredLabels"`
	Labels     map[string]string `json:"labels"`
}

// discoverTargets runs the service discovery and relabelling of one job of a Prometheus
// configuration file as Prometheus does on loading it, through promtool, and fails the test
// unless every static target of the job is in the report.
//
// promtool listens to the discovery for the whole of its --timeout, however early the targets
// arrive. Static targets arrive at once, so a short listen usually holds them all; when a loaded
// machine delays them past it, the report lacks some, and promtool listens again for its default
// 30s.
func discoverTargets(t *testing.T, configPath string, job scrapeJob) []discoveredTarget {
	t.Helper()
	var targets []discoveredTarget
	for _, timeout := range []string{"--timeout=2s", "--timeout=30s"} {
		out := testkit.RunTool(t, "promtool", "check", "service-discovery", timeout, configPath, job.name)
		targets = nil
		if err := json.Unmarshal([]byte(out), &targets); err != nil {
			t.Fatalf("promtool check service-discovery %s: %v\n%s", job.name, err, out)
		}
		if len(targets) == job.targets {
			return targets
		}
	}
	t.Fatalf("job %s: promtool discovered %d targets, the configuration lists %d", job.name, len(targets), job.targets)
	return nil
}
