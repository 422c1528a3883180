package deploytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestHelmExamplesConfigLoads loads the exporter configuration of every committed helm template
// rendering (deploy/helm/examples, kept current by make chart-test) with the exporter's own
// strict loader and validation, so the chart never writes a file the exporter refuses at start.
func TestHelmExamplesConfigLoads(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join(testkit.RepoRoot(t), "deploy", "helm", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, f := range examples {
		for _, doc := range documents(t, f) {
			content, ok := get(doc, "data", "lock-exporter.yml").(string)
			if doc["kind"] != "ConfigMap" || !ok {
				continue
			}
			// The password files are the chart's Secret mounts under /etc/lock-exporter; here they
			// live under a temporary directory in their place, so validation can read them.
			dir := t.TempDir()
			content = strings.ReplaceAll(content, "/etc/lock-exporter/", dir+"/")
			for _, line := range strings.Split(content, "\n") {
				if _, file, ok := strings.Cut(line, "password_file: "); ok {
					if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, []byte("pw\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			path := filepath.Join(dir, "lock-exporter.yml")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := exporterconfig.Load(path)
			if err == nil {
				err = cfg.Validate()
			}
			if err != nil {
				t.Errorf("%s: the exporter refuses the chart's configuration: %v\n%s", filepath.Base(f), err, content)
			}
			loaded++
		}
	}
	if loaded < 2 {
		t.Errorf("loaded %d configurations from %d examples, want one per rendering (at least 2)", loaded, len(examples))
	}
}
