package pack

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteGuarded: what WriteGuarded overwrites, refuses, and says, with the record it keeps.
func TestWriteGuarded(t *testing.T) {
	files := []File{{"a.yml", []byte("a: 1\n")}}
	tests := []struct {
		name     string
		existing map[string]string // path → content before the run
		force    bool
		wantErr  string // "" for none
	}{
		{"first run into an empty directory", nil, false, ""},
		{"same-named file of the user's", map[string]string{"a.yml": "mine\n"}, false, "a.yml was not written by lockwatch-pack"},
		{"same-named file, forced", map[string]string{"a.yml": "mine\n"}, true, ""},
		{"same-named file equal to the pack's", map[string]string{"a.yml": "a: 1\n"}, false, ""},
		{"edited since the pack wrote it", map[string]string{"a.yml": "a: 0 # edited\n",
			RecordFile: sha256Hex([]byte("a: 0\n")) + "  a.yml\n"}, false, "a.yml changed since lockwatch-pack wrote it"},
		{"the pack's own older content", map[string]string{"a.yml": "a: 0\n",
			RecordFile: sha256Hex([]byte("a: 0\n")) + "  a.yml\n"}, false, ""},
		{"a record that is not one", map[string]string{RecordFile: "a.yml\n"}, false, "delete the file to start a new record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, data := range tt.existing {
				writeFile(t, filepath.Join(root, p), data)
			}
			_, err := WriteGuarded(root, files, tt.force, &bytes.Buffer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("WriteGuarded: %v, want one line with %q", err, tt.wantErr)
				}
				if got, _ := os.ReadFile(filepath.Join(root, "a.yml")); string(got) != tt.existing["a.yml"] {
					t.Errorf("a refused run changed a.yml to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteGuarded: %v", err)
			}
			record, err := readRecord(root)
			if err != nil || record["a.yml"] != sha256Hex(files[0].Data) {
				t.Errorf("record %v (%v), want a.yml's sha256", record, err)
			}
		})
	}
}

// TestHandEditIsErrHandEdited: the refusal is a sentinel callers can test for.
func TestHandEditIsErrHandEdited(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.yml"), "mine\n")
	_, err := WriteGuarded(root, []File{{"a.yml", []byte("a: 1\n")}}, false, &bytes.Buffer{})
	if !errors.Is(err, ErrHandEdited) {
		t.Errorf("WriteGuarded: %v, want ErrHandEdited", err)
	}
}
