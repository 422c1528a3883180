package deploytest

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestManifestsSetGoMemLimit: the Kubernetes Deployment sets GOMEMLIMIT, and to the Helm chart's
// default goMemLimit, so that both keep the exporter's heap under the 128Mi limit the same way
// (cmd/lock-exporter's TestIndexMemory measures the exporter with the Deployment's value).
func TestManifestsSetGoMemLimit(t *testing.T) {
	c := get(kubeObject(t, "lock-exporter.yaml", "Deployment"), "spec", "template", "spec", "containers", 0)
	var manifest any
	env, _ := get(c, "env").([]any)
	for _, e := range env {
		if get(e, "name") == "GOMEMLIMIT" {
			manifest = get(e, "value")
		}
	}
	b, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "deploy", "helm", "lock-exporter", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		GoMemLimit string `yaml:"goMemLimit"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	if manifest == nil || manifest != values.GoMemLimit {
		t.Errorf("the Deployment's GOMEMLIMIT is %v, the chart's goMemLimit %q: want one value, set", manifest, values.GoMemLimit)
	}
}
