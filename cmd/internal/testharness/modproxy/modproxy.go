// Package modproxy writes a Go module proxy as a directory tree, for GOPROXY=file://DIR: the
// layout the go command reads (DIR/<module>/@v/list, <version>.info, .mod and .zip), holding
// modules of this checkout at a version that was never tagged. A test then builds an outside
// consumer, or `go install`s a command at that version, exactly as a user would once the
// modules are published: no go.work, no replace, the module graph as the proxy serves it.
//
// It is for tests; it lives in the cmd module because golang.org/x/mod must not enter the
// library module's go.mod.
package modproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// Add writes the module rooted at srcDir to the proxy tree dir as path@version. The module's
// files are the ones GitFiles lists, so the zip holds what a tag of the checkout would (plus
// changes not committed yet), and no build output or other untracked, ignored file. Files of
// nested modules (directories with their own go.mod) are left out, as the go command does.
func Add(dir, path, version, srcDir string) error {
	files, err := GitFiles(srcDir)
	if err != nil {
		return err
	}
	m := module.Version{Path: path, Version: version}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, m, zipFiles(srcDir, files)); err != nil {
		return fmt.Errorf("zip %s: %w", m, err)
	}
	goMod, err := os.ReadFile(filepath.Join(srcDir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{escVersion + ".zip": zipped.Bytes(), escVersion + ".mod": goMod, escVersion + ".info": info} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(vdir, "list"), version)
}

// addToList adds version to the proxy's version list for one module, once.
func addToList(list, version string) error {
	data, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(data))
	if slices.Contains(versions, version) {
		return nil
	}
	versions = append(versions, version)
	return os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// GitFiles lists, relative to srcDir and slash-separated, the files under srcDir that git
// tracks or would track (untracked files that no .gitignore excludes), leaving out those that
// no longer exist in the working tree.
func GitFiles(srcDir string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = srcDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %v: %s", srcDir, err, stderr.String())
	}
	var files []string
	seen := map[string]bool{} // a file with merge conflicts is listed once per stage
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		if _, err := os.Lstat(filepath.Join(srcDir, filepath.FromSlash(f))); err != nil {
			continue // deleted, not yet committed
		}
		files = append(files, f)
	}
	return files, nil
}

// dirFile is one file of a module's source directory, as modzip wants it.
type dirFile struct{ root, path string }

func (f dirFile) Path() string                 { return f.path }
func (f dirFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs()) }
func (f dirFile) Open() (io.ReadCloser, error) { return os.Open(f.abs()) }
func (f dirFile) abs() string                  { return filepath.Join(f.root, filepath.FromSlash(f.path)) }

func zipFiles(root string, paths []string) []modzip.File {
	files := make([]modzip.File, len(paths))
	for i, p := range paths {
		files[i] = dirFile{root: root, path: p}
	}
	return files
}
