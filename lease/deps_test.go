package lease

import (
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The library links the OpenTelemetry API only.
func TestLibraryLinksOnlyTheOTelAPI(t *testing.T) {
	testkit.CheckLinksOnlyOTelAPI(t, "./lease")
}
