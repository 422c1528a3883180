package main

import (
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestBinaryLinksNoDemoOrTestCode keeps the production binary free of the demo (its workload,
// redis-server launcher, other clients' replayed locks and injected faults, in
// cmd/lockwatch-demo, cmd/internal/demo, internal/redisproc and internal/otherclients), of fault
// injection and of the test harness: what `go list -deps` reports
// for this command must name none of them.
func TestBinaryLinksNoDemoOrTestCode(t *testing.T) {
	const module = "github.com/lockwatch/lockwatch/"
	forbidden := []string{
		"cmd/internal/demo",
		"internal/redisproc",
		"internal/otherclients",
		"cmd/internal/testharness",
		"internal/testharness",
		"integration",
		"cmd/lockwatch-demo",
	}
	deps := testkit.Deps(t, "./cmd/lock-exporter")
	if len(deps) == 0 || deps[len(deps)-1] != module+"cmd/lock-exporter" {
		t.Fatalf("go list -deps did not list this command last: %q", deps)
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == module+f || strings.HasPrefix(dep, module+f+"/") {
				t.Errorf("lock-exporter links %s", dep)
			}
		}
	}
}
