package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoRoot finds the checkout's root (the library module's, beside go.work) from this
// package's directory, not cmd/go.mod, tools/go.mod or anything else below the root.
func TestRepoRoot(t *testing.T) {
	root := RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(data), "\n"); first != "module github.com/lockwatch/lockwatch" {
		t.Errorf("RepoRoot() = %s whose go.mod starts %q, want the lockwatch module", root, first)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "testharness", "testkit", "repo.go")); err != nil {
		t.Errorf("RepoRoot() = %s: %v", root, err)
	}
}
