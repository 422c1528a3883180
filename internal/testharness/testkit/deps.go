package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// Deps returns what `go list -deps` reports for pkg (a path relative to the repository root,
// such as "./lease"): the packages a build of pkg links, pkg itself last.
func Deps(tb testing.TB, pkg string) []string {
	tb.Helper()
	cmd := exec.Command(GoBinary(), "list", "-deps", pkg)
	cmd.Dir = RepoRoot(tb)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// CheckLinksOnlyOTelAPI fails tb unless pkg links the OpenTelemetry metric API and nothing
// else of OpenTelemetry (no SDK, no exporter, no translator): an application that passes no
// MeterProvider pays for no SDK, and one that does brings its own.
func CheckLinksOnlyOTelAPI(tb testing.TB, pkg string) {
	tb.Helper()
	var api int
	for _, dep := range Deps(tb, pkg) {
		if !strings.HasPrefix(dep, "go.opentelemetry.io/") && !strings.Contains(dep, "otlptranslator") {
			continue
		}
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/metric") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/attribute") {
			api++
			continue
		}
		tb.Errorf("%s depends on %s; only the OTel metric API may be linked", pkg, dep)
	}
	if api == 0 {
		tb.Errorf("%s does not link go.opentelemetry.io/otel/metric: the MeterProvider option is gone?", pkg)
	}
}
