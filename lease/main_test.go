package lease

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redisproc"
	"go.uber.org/goleak"
)

// sharedAddr is a redis-server started once for the package. Example functions have no
// testing.TB to start their own, and sharing one server keeps the suite fast; tests that need
// to pause, kill or hook a server start their own with redistest.
var sharedAddr string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sharedAddr = srv.Addr()
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak after the lease tests:", err)
			return 1
		}
	}
	return code
}
