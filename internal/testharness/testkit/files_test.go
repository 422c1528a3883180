package testkit

import (
	"os"
	"testing"
)

func TestWriteFile(t *testing.T) {
	tests := []struct{ name, content string }{
		{"config.yml", "namespaces: []\n"},
		{"empty", ""},
	}
	for _, tt := range tests {
		path := WriteFile(t, tt.name, tt.content)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != tt.content || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: content %q mode %v, want %q and 0600", tt.name, data, info.Mode().Perm(), tt.content)
		}
	}
}
