package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// packBinary builds lockwatch-pack into the test's temporary directory (go build's cache makes
// a second build a link).
func packBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lockwatch-pack")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runPack runs the built command in dir; it returns the exit status (0 on success).
func runPack(t *testing.T, bin, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, o.String(), e.String()
}

const editedManifest = "deploy/kubernetes/lock-exporter.yaml"

// TestHandEditsAreNeverOverwritten runs the real command into a temporary directory: a file the
// user changed since the last run, or one of the pack's names the pack did not write, makes the
// run refuse with one line naming it and change nothing; --force overwrites; unrelated files are
// never touched, and files the pack wrote are rewritten freely.
func TestHandEditsAreNeverOverwritten(t *testing.T) {
	tests := []struct {
		name      string
		before    func(t *testing.T, out string) // after a first run into out (prepare runs none if nil first)
		firstRun  bool
		wantFiles []string // named on the refusal's one line
	}{
		{"hand edit since the last run", func(t *testing.T, out string) {
			appendTo(t, filepath.Join(out, editedManifest), "# my edit\n")
		}, true, []string{editedManifest}},
		{"same name, not written by the pack", func(t *testing.T, out string) {
			writeTestFile(t, filepath.Join(out, "alerts/lockwatch-alerts.yml"), "groups: []  # mine\n")
		}, false, []string{"alerts/lockwatch-alerts.yml"}},
		{"two hand edits", func(t *testing.T, out string) {
			appendTo(t, filepath.Join(out, editedManifest), "# my edit\n")
			appendTo(t, filepath.Join(out, "deploy/helm/lock-exporter/values.yaml"), "# mine\n")
		}, true, []string{editedManifest, "deploy/helm/lock-exporter/values.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, work := packBinary(t), t.TempDir()
			out := filepath.Join(work, "pack")
			if tt.firstRun {
				if code, _, stderr := runPack(t, bin, work, "--out", "pack"); code != 0 {
					t.Fatalf("first run: exit %d: %s", code, stderr)
				}
			}
			tt.before(t, out)
			snapshot := readTree(t, out)

			code, _, stderr := runPack(t, bin, work, "--out", "pack", "--config", writeTestFile(t, filepath.Join(work, "p.yml"), "runbook_base_url: https://wiki.example.com/lw\n"))
			if code != 1 || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("re-run over a hand edit: exit %d, stderr %q; want exit 1 and one line", code, stderr)
			}
			for _, f := range tt.wantFiles {
				if !strings.Contains(stderr, f) || !strings.Contains(stderr, "--force") {
					t.Errorf("the refusal %q does not name %s and --force", stderr, f)
				}
			}
			if after := readTree(t, out); !equalTrees(snapshot, after) {
				t.Errorf("a refused run changed files under %s", out)
			}

			if code, _, stderr := runPack(t, bin, work, "--out", "pack", "--force"); code != 0 {
				t.Fatalf("--force: exit %d: %s", code, stderr)
			}
			checkPackWritten(t, out)
		})
	}
}

// TestRerunRewritesItsOwnFilesAndLeavesOthers: a second run with other settings rewrites what
// the first run wrote without --force, and files the pack does not generate stay as they were.
func TestRerunRewritesItsOwnFilesAndLeavesOthers(t *testing.T) {
	bin, work := packBinary(t), t.TempDir()
	out := filepath.Join(work, "pack")
	mine := map[string]string{"notes.txt": "my notes\n", "alerts/my-alerts.yml": "groups: []\n", "deploy/kubernetes/overlay/kustomization.yaml": "resources: [../]\n"}
	for p, data := range mine {
		writeTestFile(t, filepath.Join(out, p), data)
	}
	if code, _, stderr := runPack(t, bin, work, "--out", "pack"); code != 0 {
		t.Fatalf("first run into a directory of other files: exit %d: %s", code, stderr)
	}
	cfg := writeTestFile(t, filepath.Join(work, "p.yml"), "runbook_base_url: https://wiki.example.com/lw\n")
	code, stdout, stderr := runPack(t, bin, work, "--out", "pack", "--config", cfg)
	if code != 0 {
		t.Fatalf("re-run with other settings: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "updated   alerts/lockwatch-alerts.yml") {
		t.Errorf("the re-run did not rewrite the alerts:\n%s", stdout)
	}
	for p, data := range mine {
		if got, err := os.ReadFile(filepath.Join(out, p)); err != nil || string(got) != data {
			t.Errorf("%s: %q (%v), want it untouched", p, got, err)
		}
	}
	checkPackWritten(t, out)
}

// TestEveryFileSaysItIsGenerated: each file of the pack says in its comments that
// lockwatch-pack generated it, or, a JSON dashboard (JSON has no comments), is listed in the record file. None points at a
// repository path, which a user of the installed binary does not have.
func TestEveryFileSaysItIsGenerated(t *testing.T) {
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".json") && !strings.HasSuffix(f.Path, "values.schema.json") {
			continue // listed in the record: checkPackWritten
		}
		head := string(f.Data[:min(len(f.Data), 600)])
		if !strings.Contains(head, "Generated by lockwatch-pack") {
			t.Errorf("%s does not open saying it is generated:\n%s", f.Path, head)
		}
		if strings.Contains(head, "cmd/lockwatch-pack/") {
			t.Errorf("%s's header points into the repository:\n%s", f.Path, head)
		}
	}
}

// checkPackWritten: every file of the default pack is under out, and the record lists each
// with the sha256 of its content on disk.
func checkPackWritten(t *testing.T, out string) {
	t.Helper()
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	record := readRecord(t, filepath.Join(out, pack.RecordFile))
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := record[f.Path]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("the record has %q for %s, want its content's sha256", got, f.Path)
		}
	}
}

// readRecord parses a record file: comment lines, then "SHA256  PATH" lines.
func readRecord(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no record file: %v", err)
	}
	record := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") {
			sum, p, _ := strings.Cut(line, "  ")
			record[p] = sum
		}
	}
	return record
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		tree[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, data := range a {
		if b[p] != data {
			return false
		}
	}
	return true
}

func writeTestFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
