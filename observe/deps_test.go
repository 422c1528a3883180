package observe

import (
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// observe links the OpenTelemetry API only: an application that passes no MeterProvider pays
// for no SDK, and one that does brings its own SDK and exporters. (The OTel path's own tests,
// which need the SDK, are in the integration module: integration/otel.)
func TestObserveLinksOnlyTheOTelAPI(t *testing.T) {
	testkit.CheckLinksOnlyOTelAPI(t, "./observe")
}
