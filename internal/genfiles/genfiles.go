// Package genfiles writes the files lockwatch-pack generates (rules, dashboards, manifests) into
// a checkout or an output directory.
package genfiles

import (
	"os"
	"path/filepath"
)

// Write writes files (file name → content) into dir, creating dir as needed and replacing files
// of the same name. The files are meant to be committed and read by Prometheus, Grafana and
// kubectl, so they are world-readable like the rest of a checkout.
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
