package deploytest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestReleasePackagesTheChartAtTheReleaseVersion: `make release RELEASE_VERSION=…` builds the
// binaries and the image at that version, so the chart it packages beside them must carry it
// too, as its version and as the appVersion its image tag defaults to. Packaged as committed,
// the chart said VERSION's 0.1.0 and installed the image v0.1.0, not the one in dist/. Read from
// `make -n`, which prints the recipe without running it.
func TestReleasePackagesTheChartAtTheReleaseVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	cmd := exec.Command("make", "-n", "release", "RELEASE_VERSION=v0.2.0-rc.1")
	cmd.Dir = testkit.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	var pkg string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "helm package") {
			pkg = line
		}
	}
	if pkg == "" {
		t.Fatalf("make -n release runs no helm package:\n%s", out)
	}
	for _, want := range []string{"--version 0.2.0-rc.1", "--app-version v0.2.0-rc.1"} {
		if !strings.Contains(pkg, want) {
			t.Errorf("the release packages the chart without %s:\n%s", want, pkg)
		}
	}
}
