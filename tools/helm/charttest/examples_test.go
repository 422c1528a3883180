package charttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// examples are the committed renderings: file under deploy/helm/examples -> its values file
// there ("" for the chart's defaults).
var examples = map[string]string{
	"default.yaml":      "",
	"multi-target.yaml": "multi-target-values.yaml",
}

// TestExamplesUpToDate is the examples' drift test: deploy/helm/examples holds what helm
// template renders today, like the pack's drift test for the generated files. With
// LOCKWATCH_UPDATE_CHART_EXAMPLES=1 (make chart-examples) it rewrites them instead.
func TestExamplesUpToDate(t *testing.T) {
	update := os.Getenv("LOCKWATCH_UPDATE_CHART_EXAMPLES") == "1"
	for out, values := range examples {
		t.Run(out, func(t *testing.T) {
			if values != "" {
				values = filepath.Join(repoRoot(t), examplesDir, values)
			}
			got := template(t, chartDir, values)
			if _, err := decode(got); err != nil {
				t.Fatalf("strict decoding: %v", err)
			}
			path := filepath.Join(repoRoot(t), examplesDir, out)
			if update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; run `make chart-examples`", err)
			}
			if !bytes.Equal(committed, got) {
				t.Errorf("%s/%s is not what helm template renders; run `make chart-examples` and commit it\n%s",
					examplesDir, out, firstDifference(string(got), string(committed)))
			}
		})
	}
}
