package modproxy

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A module's zip holds its committed and untracked files, without ignored ones or a nested
// module's; list, .info and .mod sit where the go command looks for them, and adding a second
// version keeps the first in the list.
func TestAddWritesTheProxyLayout(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":          "module example.com/Lib\n\ngo 1.26\n",
		"lib.go":          "package lib\n",
		"untracked.go":    "package lib\n",
		".gitignore":      "/bin/\n",
		"bin/built":       "binary",
		"nested/go.mod":   "module example.com/Lib/nested\n",
		"nested/other.go": "package nested\n",
	} {
		path := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "go.mod", "lib.go", ".gitignore", "nested")

	proxy := t.TempDir()
	for _, v := range []string{"v1.2.3", "v1.3.0", "v1.2.3"} {
		if err := Add(proxy, "example.com/Lib", v, src); err != nil {
			t.Fatal(err)
		}
	}
	vdir := filepath.Join(proxy, "example.com", "!lib", "@v") // upper case is escaped
	list, err := os.ReadFile(filepath.Join(vdir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(list)); !slices.Equal(got, []string{"v1.2.3", "v1.3.0"}) {
		t.Errorf("list = %q, want v1.2.3 and v1.3.0 once each", got)
	}
	if mod, err := os.ReadFile(filepath.Join(vdir, "v1.2.3.mod")); err != nil || !strings.HasPrefix(string(mod), "module example.com/Lib\n") {
		t.Errorf("v1.2.3.mod = %q, %v", mod, err)
	}
	if info, err := os.ReadFile(filepath.Join(vdir, "v1.2.3.info")); err != nil || !strings.Contains(string(info), `"Version":"v1.2.3"`) {
		t.Errorf("v1.2.3.info = %q, %v", info, err)
	}
	zr, err := zip.OpenReader(filepath.Join(vdir, "v1.2.3.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names) // entries carry the path unescaped; only the proxy's directories escape it
	want := []string{"example.com/Lib@v1.2.3/.gitignore", "example.com/Lib@v1.2.3/go.mod", "example.com/Lib@v1.2.3/lib.go", "example.com/Lib@v1.2.3/untracked.go"}
	if !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q", names, want)
	}
}
