package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/lockwatch/lockwatch/alerts"
	"github.com/lockwatch/lockwatch/dashboards"
	"github.com/lockwatch/lockwatch/internal/genfiles"
	"github.com/lockwatch/lockwatch/internal/manifests"
	"github.com/lockwatch/lockwatch/internal/packconfig"
)

// packFiles renders the whole pack for cfg: every file's path relative to the output root (with
// slashes) and its content, in a stable order.
func packFiles(cfg packconfig.Config) (map[string][]byte, error) {
	files := map[string][]byte{}
	rules, err := alerts.Generate(cfg)
	if err != nil {
		return nil, err
	}
	for _, f := range rules {
		files[filepath.ToSlash(f.Path)] = f.Data
	}
	for dir, generate := range map[string]func(packconfig.Config) (map[string][]byte, error){
		dashboards.Dir: dashboards.Generate,
		manifests.Dir:  manifests.Generate,
	} {
		out, err := generate(cfg)
		if err != nil {
			return nil, err
		}
		for name, data := range out {
			files[dir+"/"+name] = data
		}
	}
	return files, nil
}

// writePack writes the pack under root and says, file by file, what it did: "updated" for a
// file whose content changed (or is new), "unchanged" for one already up to date.
func writePack(cfg packconfig.Config, root string, report io.Writer) error {
	files, err := packFiles(cfg)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	updated := 0
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		old, err := os.ReadFile(full)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil && bytes.Equal(old, files[p]) {
			fmt.Fprintf(report, "unchanged %s\n", p)
			continue
		}
		if err := genfiles.Write(filepath.Dir(full), map[string][]byte{filepath.Base(full): files[p]}); err != nil {
			return err
		}
		updated++
		fmt.Fprintf(report, "updated   %s (%d bytes)\n", p, len(files[p]))
	}
	fmt.Fprintf(report, "lockwatch-pack: %d of %d files updated under %s\n", updated, len(paths), root)
	return nil
}
