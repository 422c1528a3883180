package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestServedMetricsAreDocumented: every lock_* metric family the exporter serves, on /metrics
// and on /scrape, has its row in docs/metrics.md.
func TestServedMetricsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "jobs:2": {idle: 30}})
	config := newConfigFile(t, "namespaces:\n  - {name: jobs, pattern: 'jobs:*', expected_ttl: 60s, expected_renew_interval: 20s, expected_max_hold: 1h}\n"+
		fmt.Sprintf("targets:\n  - {name: same, addr: %s}\n", srv.Addr))
	s := startServer(t, nil, "--config.file", string(config), "--redis.addr", srv.Addr)
	_, fromMetrics := s.get(t, "/metrics", 5*time.Second)
	_, fromScrape := s.get(t, scrapeURL("same"), 5*time.Second)
	family := regexp.MustCompile(`(?m)^# TYPE (lock_\w+) `)
	served := 0
	for _, m := range family.FindAllStringSubmatch(fromMetrics+fromScrape, -1) {
		served++
		if !strings.Contains(string(doc), "| `"+m[1]+"` |") {
			t.Errorf("%s is served but has no row in docs/metrics.md", m[1])
		}
	}
	if served < 10 {
		t.Fatalf("only %d lock_* families served: the scrape did not work", served)
	}
}

// TestREADMEQuickStartShowsWhatIsServed: the README's quick-start output lists the series the
// exporter serves for its setup (three keys under jobs:, one without expiry), no more, no less.
func TestREADMEQuickStartShowsWhatIsServed(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```\nlock_exporter_build_info")
	if !ok {
		t.Fatal("README.md: no quick-start output block starting with lock_exporter_build_info")
	}
	block, _, _ = strings.Cut("lock_exporter_build_info"+block, "```")

	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{
		"jobs:cleanup":     {ttl: 45 * time.Second, idle: 5},
		"jobs:report-42":   {ttl: time.Minute, idle: 5},
		"jobs:legacy-cron": {idle: 5},
	})
	s := startServer(t, nil, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	_, body := s.get(t, "/metrics", 5*time.Second)
	var served []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "lock_") {
			served = append(served, seriesOf(line))
		}
	}
	var shown []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		shown = append(shown, seriesOf(line))
	}
	if strings.Join(shown, "\n") != strings.Join(served, "\n") {
		t.Errorf("README.md's quick-start output shows\n%s\nthe exporter serves\n%s", strings.Join(shown, "\n"), strings.Join(served, "\n"))
	}
}

// seriesOf is a sample line's series without its value, and without the label values that
// depend on the machine (build info's).
func seriesOf(line string) string {
	series, _, _ := strings.Cut(line, " ")
	if strings.HasPrefix(series, "lock_exporter_build_info") {
		return "lock_exporter_build_info"
	}
	return series
}
