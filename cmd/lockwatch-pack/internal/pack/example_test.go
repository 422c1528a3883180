package pack_test

import (
	"fmt"
	"io"
	"os"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/manifests"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Generating the pack the way cmd/lockwatch-pack does: every part is a pack.Generator, and one
// writer puts their files under a root.
func Example() {
	cfg := packconfig.Default()
	files, err := pack.Generate(cfg, rules.Generate, dashboards.Generate, manifests.Generate)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Path)
	}

	root, err := os.MkdirTemp("", "pack")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	updated, err := pack.Write(root, files, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	stale, err := pack.Stale(root, files)
	fmt.Println(updated, "written,", len(stale), "stale", err)
	// Output:
	// alerts/lockwatch-alerts.yml
	// alerts/lockwatch-recording.yml
	// dashboards/lockwatch-instances.json
	// dashboards/lockwatch-overview.json
	// deploy/kubernetes/dashboards.yaml
	// deploy/kubernetes/kustomization.yaml
	// deploy/kubernetes/lock-exporter.yaml
	// deploy/kubernetes/monitors.yaml
	// deploy/kubernetes/prometheusrule.yaml
	// 9 written, 0 stale <nil>
}
