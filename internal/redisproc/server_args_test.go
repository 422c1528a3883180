package redisproc

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

func TestFreePortIsBindableBelowTheBusRange(t *testing.T) {
	for range 5 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port <= 0 || port >= maxPort {
			t.Fatalf("FreePort() = %d, want 1..%d", port, maxPort-1)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
	}
}

func TestArgs(t *testing.T) {
	args := Args("/tmp/x")
	tests := []struct {
		flag, want string
	}{
		{"--bind", "127.0.0.1"},
		{"--dir", "/tmp/x"},
		{"--save", ""},
		{"--appendonly", "no"},
		{"--daemonize", "no"},
	}
	for _, tt := range tests {
		i := slices.Index(args, tt.flag)
		if i < 0 || i+1 >= len(args) || args[i+1] != tt.want {
			t.Errorf("Args: %s not followed by %q in %q", tt.flag, tt.want, args)
		}
	}
}
