package releasetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/lockwatch/lockwatch/cmd/internal/testharness/modproxy"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestModulesRequireEachOtherAtVERSION: the repository's modules are tagged together at the
// release in VERSION (docs/deploy.md#versioning), so every requirement of one on another names
// VERSION, and go.work's replace lines, which stand in for that release until it is published,
// name VERSION too and point at the module they replace. A bump of VERSION without `make tidy`,
// or a hand edit of one go.mod, fails here.
func TestModulesRequireEachOtherAtVERSION(t *testing.T) {
	root := testkit.RepoRoot(t)
	version := readVersion(t, root)
	dirOf := map[string]string{} // module path → directory, for every go.mod of the repository
	requires := map[string]bool{}
	goMods, err := repoGoMods(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range goMods {
		f := parseGoMod(t, filepath.Join(root, rel))
		dirOf[f.Module.Mod.Path] = filepath.Dir(rel)
		for _, r := range f.Require {
			if !ours(r.Mod.Path) {
				continue
			}
			requires[r.Mod.Path] = true
			if r.Mod.Version != version {
				t.Errorf("%s requires %s %s, want VERSION %s", rel, r.Mod.Path, r.Mod.Version, version)
			}
		}
		for _, r := range f.Replace {
			if ours(r.Old.Path) {
				t.Errorf("%s replaces %s: go install refuses a module with replace lines; go.work holds them", rel, r.Old.Path)
			}
		}
	}
	if len(requires) == 0 {
		t.Fatal("no module requires another of the repository; the go.mod files were not read")
	}

	raw, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	work, err := modfile.ParseWork("go.work", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	replaced := map[string]bool{}
	for _, r := range work.Replace {
		if !ours(r.Old.Path) {
			continue
		}
		replaced[r.Old.Path] = true
		if r.Old.Version != version {
			t.Errorf("go.work replaces %s %s, want VERSION %s", r.Old.Path, r.Old.Version, version)
		}
		if dir, ok := dirOf[r.Old.Path]; !ok || filepath.Clean(r.New.Path) != filepath.Clean(dir) {
			t.Errorf("go.work replaces %s with %s, want ./%s", r.Old.Path, r.New.Path, dir)
		}
	}
	for path := range requires {
		if !replaced[path] {
			t.Errorf("%s is required by another module but go.work has no replace line for it: the workspace cannot build before the release exists", path)
		}
	}
}

// ours reports whether path is a module of this repository.
func ours(path string) bool { return path == base || strings.HasPrefix(path, base+"/") }

func parseGoMod(t *testing.T, path string) *modfile.File {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// repoGoMods lists the repository's go.mod files (relative paths), as git sees them.
func repoGoMods(root string) ([]string, error) {
	files, err := modproxy.GitFiles(root)
	if err != nil {
		return nil, err
	}
	var goMods []string
	for _, f := range files {
		if filepath.Base(f) == "go.mod" {
			goMods = append(goMods, filepath.FromSlash(f))
		}
	}
	return goMods, nil
}
