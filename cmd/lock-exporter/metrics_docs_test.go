package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/redistest"
	"github.com/lockwatch/lockwatch/internal/testkit"
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
	config := newConfigFile(t, "namespaces:\n  - {name: jobs, pattern: 'jobs:*', expected_ttl: 60s, expected_renew_interval: 20s}\n"+
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
