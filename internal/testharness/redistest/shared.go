package redistest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/redisproc"
)

// RunShared is a TestMain body for a package that shares one redis-server among its tests and
// examples (examples have no testing.TB to start their own): it starts the server, stores its
// address in *addr, runs the tests, stops the server and, when they passed, fails the run on a
// goroutine left behind. Use it as os.Exit(redistest.RunShared(m, &sharedAddr)).
func RunShared(m *testing.M, addr *string) int {
	srv, err := redisproc.Start(context.Background(), redisproc.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*addr = srv.Addr()
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak after the tests:", err)
			return 1
		}
	}
	return code
}
