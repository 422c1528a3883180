package otel_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// sharedAddr is a redis-server started once for the package, as lease's own tests do: the
// examples have no testing.TB to start their own. Tests that pause a server start their own
// with redistest.
var sharedAddr string

func TestMain(m *testing.M) {
	os.Exit(redistest.RunShared(m, &sharedAddr))
}

var keySeq atomic.Int64

// uniqueKey is a lock key no other test of the run uses.
func uniqueKey(t testing.TB) string {
	return fmt.Sprintf("test:%s:%d", t.Name(), keySeq.Add(1))
}
