package lease

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testkit"
)

// The library links the OpenTelemetry API only: an application that passes no MeterProvider
// pays for no SDK, and one that does brings its own SDK and exporters.
func TestLibraryLinksOnlyTheOTelAPI(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./lease")
	cmd.Dir = testkit.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var api int
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, "go.opentelemetry.io/") && !strings.Contains(pkg, "otlptranslator") {
			continue
		}
		if strings.HasPrefix(pkg, "go.opentelemetry.io/otel/metric") || strings.HasPrefix(pkg, "go.opentelemetry.io/otel/attribute") {
			api++
			continue
		}
		t.Errorf("lease depends on %s; only the OTel metric API may be linked", pkg)
	}
	if api == 0 {
		t.Error("lease does not link go.opentelemetry.io/otel/metric: the MeterProvider option is gone?")
	}
}
