package redisproc

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func startProcess(t *testing.T, cfg Config) *Process {
	t.Helper()
	p, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// TestSentinelWatchesItsMaster: the Sentinel answers for the master it was given, with the
// down-after it was given, and does so again after a Restart, which rewrites its configuration.
func TestSentinelWatchesItsMaster(t *testing.T) {
	ctx := context.Background()
	master := startProcess(t, Config{})
	s := startProcess(t, Config{Sentinel: &Monitor{Name: "locks", MasterAddr: master.Addr(), DownAfter: 1500 * time.Millisecond}})
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer sc.Close()
	check := func(when string) {
		t.Helper()
		got, err := sc.GetMasterAddrByName(ctx, "locks").Result()
		if err != nil || len(got) != 2 || net.JoinHostPort(got[0], got[1]) != master.Addr() {
			t.Fatalf("%s: master of locks = %q, %v; want %s", when, got, err, master.Addr())
		}
		info, err := sc.Master(ctx, "locks").Result()
		if err != nil || info["down-after-milliseconds"] != "1500" {
			t.Fatalf("%s: down-after-milliseconds = %q, %v; want 1500", when, info["down-after-milliseconds"], err)
		}
	}
	check("after Start")
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	check("after Restart")
	if _, err := os.Stat(filepath.Join(s.Dir(), sentinelConfFile)); err != nil {
		t.Errorf("no %s in the Sentinel's directory: %v", sentinelConfFile, err)
	}
}

func TestSentinelMonitorIsValidated(t *testing.T) {
	tests := []struct {
		name string
		mon  Monitor
	}{
		{"no name", Monitor{MasterAddr: "127.0.0.1:6379"}},
		{"no port", Monitor{Name: "locks", MasterAddr: "127.0.0.1"}},
		{"empty port", Monitor{Name: "locks", MasterAddr: "127.0.0.1:"}},
		{"no address", Monitor{Name: "locks"}},
		{"no host", Monitor{Name: "locks", MasterAddr: ":6379"}},
		{"port out of range", Monitor{Name: "locks", MasterAddr: "127.0.0.1:65536"}},
		{"port not a number", Monitor{Name: "locks", MasterAddr: "127.0.0.1:redis"}},
		{"space in name", Monitor{Name: "my locks", MasterAddr: "127.0.0.1:6379"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Start(context.Background(), Config{Sentinel: &tt.mon}); !errors.Is(err, ErrBadMonitor) {
				t.Fatalf("err = %v, want ErrBadMonitor", err)
			}
		})
	}
}
