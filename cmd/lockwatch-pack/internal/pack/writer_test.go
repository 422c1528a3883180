package pack

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name        string
		existing    map[string]string // path → content written before
		files       []File
		wantUpdated int
		wantReport  []string
	}{
		{"new nested directories", nil,
			[]File{{"alerts/a.yml", []byte("a: 1\n")}, {"deploy/kubernetes/b.yaml", []byte("b: 1\n")}},
			2, []string{"updated   alerts/a.yml (5 bytes)", "updated   deploy/kubernetes/b.yaml (5 bytes)"}},
		{"replaces a stale file", map[string]string{"alerts/a.yml": "stale: true\n"},
			[]File{{"alerts/a.yml", []byte("a: 2\n")}},
			1, []string{"updated   alerts/a.yml"}},
		{"leaves an up-to-date file", map[string]string{"alerts/a.yml": "a: 1\n"},
			[]File{{"alerts/a.yml", []byte("a: 1\n")}},
			0, []string{"unchanged alerts/a.yml"}},
		{"no files", nil, nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "out")
			for p, data := range tt.existing {
				writeFile(t, filepath.Join(root, p), data)
			}
			var report bytes.Buffer
			updated, err := Write(root, tt.files, &report)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			if updated != tt.wantUpdated {
				t.Errorf("updated %d files, want %d", updated, tt.wantUpdated)
			}
			for _, want := range tt.wantReport {
				if !strings.Contains(report.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, report.String())
				}
			}
			if stale, err := Stale(root, tt.files); err != nil || len(stale) != 0 {
				t.Errorf("after Write, Stale = %v, %v; want nothing", stale, err)
			}
		})
	}
}

func TestWriteUnderAFileFails(t *testing.T) {
	root := filepath.Join(t.TempDir(), "taken")
	writeFile(t, root, "")
	if _, err := Write(root, []File{{"alerts/a.yml", nil}}, &bytes.Buffer{}); err == nil {
		t.Error("Write under a path that is a regular file: nil error")
	}
}

// TestWriteFailureLeavesTheRootAsItWas: when one file cannot be written (here deploy/ is a
// regular file), no other file changes. Written one by one, the rules of the new configuration
// landed beside the dashboards of the old one, with "updated" lines for them, before the error.
func TestWriteFailureLeavesTheRootAsItWas(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "alerts", "a.yml"), "old\n")
	writeFile(t, filepath.Join(root, "deploy"), "not a directory\n")
	files := []File{
		{"alerts/a.yml", []byte("new\n")},
		{"dashboards/sub/b.json", []byte("{}\n")},
		{"deploy/kubernetes/c.yaml", []byte("c: 1\n")},
	}
	var report bytes.Buffer
	updated, err := Write(root, files, &report)
	if err == nil {
		t.Fatal("Write under a deploy/ that is a regular file: nil error")
	}
	if !strings.Contains(err.Error(), filepath.Join(root, "deploy", "kubernetes", "c.yaml")) && !strings.Contains(err.Error(), filepath.Join(root, "deploy")) {
		t.Errorf("error %q does not name the file or directory", err)
	}
	if updated != 0 || strings.Contains(report.String(), "updated") {
		t.Errorf("Write failed but reports %d updated:\n%s", updated, report.String())
	}
	if got, _ := os.ReadFile(filepath.Join(root, "alerts", "a.yml")); string(got) != "old\n" {
		t.Errorf("alerts/a.yml = %q after a failed Write, want it untouched", got)
	}
	var left []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != root {
			rel, _ := filepath.Rel(root, path)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if want := []string{"alerts", "alerts/a.yml", "deploy"}; !slices.Equal(left, want) {
		t.Errorf("after a failed Write the root holds %v, want %v (nothing new, no temporary file)", left, want)
	}
}

// TestWriteKeepsMode: a replaced file keeps its mode (a rule file made 0640 for Prometheus's
// group stays so); a new one is world-readable like the rest of a checkout.
func TestWriteKeepsMode(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "alerts", "a.yml")
	writeFile(t, old, "old\n")
	if err := os.Chmod(old, 0o640); err != nil {
		t.Fatal(err)
	}
	files := []File{{"alerts/a.yml", []byte("new\n")}, {"alerts/b.yml", []byte("b\n")}}
	if _, err := Write(root, files, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"a.yml": 0o640, "b.yml": 0o644} {
		if fi, err := os.Stat(filepath.Join(root, "alerts", name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("alerts/%s: %v, %v; want mode %v", name, fi.Mode(), err, want)
		}
	}
}

// TestWriteThroughSymlink: a generated file that is a symbolic link (alerts/ linked into
// Prometheus's rule directory) keeps its link, and the file it points at gets the content, as an
// in-place write did before the rename.
func TestWriteThroughSymlink(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "rules.yml")
	writeFile(t, target, "old\n")
	if err := os.MkdirAll(filepath.Join(root, "alerts"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "alerts", "a.yml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(root, []File{{"alerts/a.yml", []byte("new\n")}}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alerts/a.yml is no longer a symbolic link (%v, %v)", fi, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Errorf("the link's target holds %q, want the new content", got)
	}
}

func TestStale(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "alerts", "same.yml"), "x\n")
	writeFile(t, filepath.Join(root, "alerts", "old.yml"), "old\n")
	files := []File{
		{"alerts/same.yml", []byte("x\n")},
		{"alerts/old.yml", []byte("new\n")},
		{"dashboards/missing.json", []byte("{}\n")},
	}
	stale, err := Stale(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alerts/old.yml", "dashboards/missing.json"}; !slices.Equal(stale, want) {
		t.Errorf("Stale = %v, want %v", stale, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
