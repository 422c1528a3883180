package main

import (
	"fmt"
	"io"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/helmchart"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/manifests"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// packFiles renders the whole pack for cfg: the rule files, the dashboards (provisioning and
// grafana.com import forms), the Kubernetes manifests and the Helm chart that embed them, sorted
// by path.
func packFiles(cfg packconfig.Config) ([]pack.File, error) {
	return pack.Generate(cfg, rules.Generate, dashboards.Generate, dashboards.GenerateImport,
		manifests.Generate, helmchart.Generate)
}

// writePack writes the pack under root and says, file by file, what it did, then how many files
// it updated.
func writePack(cfg packconfig.Config, root string, report io.Writer) error {
	files, err := packFiles(cfg)
	if err != nil {
		return err
	}
	updated, err := pack.Write(root, files, report)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "lockwatch-pack: %d of %d files updated under %s\n", updated, len(files), root)
	return nil
}
