package charttest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chartDir and examplesDir are relative to the repository root.
const (
	chartDir    = "deploy/helm/lock-exporter"
	examplesDir = "deploy/helm/examples"
)

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helm runs the helm of this module's tool directive with args from the repository root and
// returns its standard output; a failure ends the test with helm's standard error.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	out, stderr, err := tryHelm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// tryHelm is helm for a run that is expected to fail: it returns the error and standard error.
func tryHelm(t *testing.T, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	bin := helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repoRoot(t)
	// Keep helm from reading or writing the user's own helm configuration and caches.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// helmBinary builds helm once per test binary (go tool -n prints the cached executable's path,
// building it first if needed).
func helmBinary(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() {
		var out []byte
		// This module is not in the repository's workspace (go.work): its own go.mod decides.
		cmd := exec.Command("go", "tool", "-n", "helm")
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, helmErr = cmd.Output()
		helmPath = strings.TrimSpace(string(out))
	})
	if helmErr != nil {
		t.Fatalf("building helm (go tool -n helm in tools/helm): %v", helmErr)
	}
	return helmPath
}

// repoRoot is three directories up from this package (tools/helm/charttest).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, chartDir, "Chart.yaml")); err != nil {
		t.Fatalf("no chart at %s: %v", filepath.Join(root, chartDir), err)
	}
	return root
}
