package pack

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// File is one generated file: its path relative to the output root, with forward slashes
// (alerts/lockwatch-alerts.yml), and its content.
type File struct {
	Path string
	Data []byte
}

// Generator renders one part of the pack for a configuration. The output must be a pure function
// of cfg (the same cfg gives the same bytes), so that regenerating an unchanged pack changes
// nothing and the drift tests can compare with the committed files.
type Generator func(cfg packconfig.Config) ([]File, error)

// Generate runs the generators and returns all their files, sorted by path so that every run
// lists them in the same order. Two files of the same path are an error: one part would silently
// overwrite another's output.
func Generate(cfg packconfig.Config, generators ...Generator) ([]File, error) {
	var all []File
	seen := map[string]bool{}
	for _, g := range generators {
		files, err := g(cfg)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := checkPath(f.Path); err != nil {
				return nil, err
			}
			if seen[f.Path] {
				return nil, fmt.Errorf("pack: %s is generated twice", f.Path)
			}
			seen[f.Path] = true
		}
		all = append(all, files...)
	}
	slices.SortFunc(all, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return all, nil
}

// checkPath refuses a path that could leave the output root or is not in canonical form.
func checkPath(p string) error {
	if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
		return fmt.Errorf("pack: %q is not a clean relative path", p)
	}
	return nil
}
