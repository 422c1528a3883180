package testkit

import (
	"net"
	"testing"
	"time"
)

func TestUnusedAddrRefusesConnections(t *testing.T) {
	addr := UnusedAddr(t)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded, want a refused connection", addr)
	}
}
