package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// scrapeInterval is the one scrape interval the deployment files and docs use. The rules' short
// windows (5m) hold ten samples at this interval; docs/deploy.md says why.
const scrapeInterval = "30s"

var intervalSetting = regexp.MustCompile(`(?m)^\s*(?:scrape_interval|interval):\s*(\S+)`)

// TestOneScrapeInterval: prometheus.yml, the ServiceMonitor and PodMonitor, the Helm chart's
// defaults and its rendered examples, and every scrape configuration shown in the docs agree on
// the scrape interval.
func TestOneScrapeInterval(t *testing.T) {
	root := testkit.RepoRoot(t)
	files := []string{
		filepath.Join(root, "deploy", "prometheus", "prometheus.yml"),
		filepath.Join(root, "deploy", "kubernetes", "monitors.yaml"),
		filepath.Join(root, "deploy", "helm", "lock-exporter", "values.yaml"),
		filepath.Join(root, "deploy", "helm", "examples", "multi-target.yaml"),
		filepath.Join(root, "README.md"),
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range append(files, docs...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range intervalSetting.FindAllStringSubmatch(string(data), -1) {
			found++
			if m[1] != scrapeInterval {
				t.Errorf("%s: %s, want %s", filepath.Base(f), m[0], scrapeInterval)
			}
		}
	}
	if found < 3 {
		t.Errorf("found %d scrape interval settings; prometheus.yml and both monitors should have one", found)
	}
}
