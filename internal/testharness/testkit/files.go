package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to name in a new temporary directory of the test and returns its
// path, readable only by the owner as secrets and configuration files are.
func WriteFile(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
