package otel_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/internal/testharness/redisproc"
)

// sharedAddr is a redis-server started once for the package, as lease's own tests do: the
// examples have no testing.TB to start their own. Tests that pause a server start their own
// with redistest.
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
			fmt.Fprintln(os.Stderr, "goroutine leak after the OTel tests:", err)
			return 1
		}
	}
	return code
}

var keySeq atomic.Int64

// uniqueKey is a lock key no other test of the run uses.
func uniqueKey(t testing.TB) string {
	return fmt.Sprintf("test:%s:%d", t.Name(), keySeq.Add(1))
}
