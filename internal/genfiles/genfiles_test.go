package genfiles

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name     string
		existing map[string]string // written before, in dir
		files    map[string][]byte
	}{
		{"new nested directory", nil, map[string][]byte{"a.yml": []byte("a: 1\n"), "b.json": []byte("{}\n")}},
		{"replaces a file of the same name", map[string]string{"a.yml": "stale: true\n"}, map[string][]byte{"a.yml": []byte("a: 2\n")}},
		{"no files", nil, map[string][]byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "dashboards")
			if len(tt.existing) > 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, data := range tt.existing {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := Write(dir, tt.files); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("dir not created: %v", err)
			}
			for name, want := range tt.files {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != string(want) {
					t.Errorf("%s = %q (%v), want %q", name, got, err, want)
				}
			}
		})
	}
}

func TestWriteIntoAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "taken")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(file, map[string][]byte{"a.yml": nil}); err == nil {
		t.Error("Write into a path that is a regular file: nil error")
	}
}
