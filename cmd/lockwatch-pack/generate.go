package main

import (
	"fmt"
	"io"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/exporterfile"
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
		manifests.Generate, helmchart.Generate, exporterfile.Generate)
}

// writeGuard says how the pack is written: recorded in root's record file, refusing to
// overwrite hand edits unless forced (pack.WriteGuarded), or, in the lockwatch checkout, where
// git keeps the record, as is.
type writeGuard struct {
	recorded bool
	force    bool
}

// writePack writes the pack under root and says, file by file, what it did, then how many files
// it updated.
func writePack(cfg packconfig.Config, root string, guard writeGuard, report io.Writer) error {
	files, err := packFiles(cfg)
	if err != nil {
		return err
	}
	write := pack.Write
	if guard.recorded {
		write = func(root string, files []pack.File, report io.Writer) (int, error) {
			return pack.WriteGuarded(root, files, guard.force, report)
		}
	}
	updated, err := write(root, files, report)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "lockwatch-pack: %d of %d files updated under %s\n", updated, len(files), root)
	return nil
}
