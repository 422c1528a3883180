package testkit

import (
	"net"
	"testing"
)

// UnusedAddr returns a loopback host:port that nothing listens on at the moment: a Redis that
// refuses connections, or an address for a server the test starts next (another process may
// take it first, as with any free port).
func UnusedAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
