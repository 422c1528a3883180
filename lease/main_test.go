package lease

import (
	"os"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// sharedAddr is a redis-server started once for the package. Example functions have no
// testing.TB to start their own, and sharing one server keeps the suite fast; tests that need
// to pause, kill or hook a server start their own with redistest.
var sharedAddr string

func TestMain(m *testing.M) {
	os.Exit(redistest.RunShared(m, &sharedAddr))
}
