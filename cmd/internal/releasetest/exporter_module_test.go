package releasetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// packOnly are modules that only the pack generator needs (the PromQL parser and test engine,
// the dashboard SDK): they belong in cmd/lockwatch-pack/go.mod, and the module that ships
// lock-exporter must not require them, so that `go install …/cmd/lock-exporter` fetches none.
var packOnly = []string{
	"github.com/prometheus/prometheus",
	"github.com/grafana/grafana-foundation-sdk",
}

// TestExporterModuleRequiresNoPackLibrary reads cmd/go.mod, whose requirements cover every
// package its commands and their tests import (module graph pruning writes them all down).
func TestExporterModuleRequiresNoPackLibrary(t *testing.T) {
	f := parseGoMod(t, filepath.Join(testkit.RepoRoot(t), "cmd", "go.mod"))
	if len(f.Require) == 0 {
		t.Fatal("cmd/go.mod requires nothing: it was not read")
	}
	for _, r := range f.Require {
		if within(r.Mod.Path, packOnly) {
			t.Errorf("cmd/go.mod requires %s %s, which only the pack needs (cmd/lockwatch-pack/go.mod)", r.Mod.Path, r.Mod.Version)
		}
	}
}

// within reports whether a module path is one of roots or a module below one of them.
func within(path string, roots []string) bool {
	for _, root := range roots {
		if path == root || strings.HasPrefix(path, root+"/") {
			return true
		}
	}
	return false
}
