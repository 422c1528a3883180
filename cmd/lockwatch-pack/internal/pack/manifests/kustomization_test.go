package manifests

import (
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestGenerateIsAWholeKustomization: what the manifests generator writes under deploy/kubernetes
// can be applied on its own (`kubectl apply -k DIR/deploy/kubernetes` after
// `lockwatch-pack --out DIR`, with no checkout): a kustomization.yaml whose every resource is a
// generated file, the exporter's Deployment and Service among them. Before, --out wrote only the
// PrometheusRule and the dashboard ConfigMaps, and the README's "the Kubernetes manifests" was a
// directory kubectl apply -k refuses (no kustomization.yaml) that deployed no exporter.
func TestGenerateIsAWholeKustomization(t *testing.T) {
	files, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	content := map[string][]byte{}
	for _, f := range files {
		paths = append(paths, f.Path)
		content[f.Path] = f.Data
	}
	k, ok := content[Dir+"/kustomization.yaml"]
	if !ok {
		t.Fatalf("Generate writes %v: no %s/kustomization.yaml", paths, Dir)
	}
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(k, &kust); err != nil {
		t.Fatal(err)
	}
	for _, r := range kust.Resources {
		if !slices.Contains(paths, Dir+"/"+r) {
			t.Errorf("kustomization.yaml lists %s, which Generate does not write (it writes %v)", r, paths)
		}
	}
	for _, want := range []string{"lock-exporter.yaml", "monitors.yaml", PrometheusRuleFile, DashboardsFile} {
		if !slices.Contains(kust.Resources, want) {
			t.Errorf("kustomization.yaml does not list %s", want)
		}
	}
}
