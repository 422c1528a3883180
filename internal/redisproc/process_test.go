package redisproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestProcessLifecycle(t *testing.T) {
	ctx := context.Background()
	p, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	// Honouring the context and not retrying: otherwise the paused PING waits out go-redis's
	// read timeout and the PING after Kill its dial retries, which prove nothing.
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("set: %v", err)
	}

	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	shortCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = c.Ping(shortCtx).Err()
	cancel()
	if err == nil {
		t.Fatal("PING answered while the server was paused")
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}

	if err := p.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after restart: exists=%d err=%v, want an empty dataset", n, err)
	}
	p.Kill()
	if p.Running() {
		t.Error("Running after Kill")
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
	if err := p.Pause(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Pause after Kill: %v, want ErrNotRunning", err)
	}
	p.Stop()
	p.Stop() // a second Stop is harmless
	if _, err := os.Stat(p.Dir()); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s not removed by Stop: %v", p.Dir(), err)
	}
}

// TestServerIsSparedTheStartersCtrlC: a terminal's Ctrl-C goes to the foreground process group;
// the server must not be in the starter's, or it dies while the demo is still removing its keys.
func TestServerIsSparedTheStartersCtrlC(t *testing.T) {
	p, err := Start(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	pgid, err := syscall.Getpgid(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == syscall.Getpgrp() {
		t.Errorf("redis-server is in the starter's process group %d: a Ctrl-C stops it too", pgid)
	}
}

func TestReaperFunctionNamesTheReaper(t *testing.T) {
	if got := runtime.FuncForPC(reflect.ValueOf(reap).Pointer()).Name(); got != ReaperFunction {
		t.Errorf("ReaperFunction = %q, the reaper is %q", ReaperFunction, got)
	}
}

func TestStopKeepsAGivenDir(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if _, err := os.Stat(filepath.Join(dir, "redis.log")); err != nil {
		t.Errorf("the log in the caller's directory is gone after Stop: %v", err)
	}
}

// TestStartFailureQuotesTheLogAndCleansUp: a server or Sentinel that refuses its command line
// fails Start with its complaint on one line and leaves no directory behind.
func TestStartFailureQuotesTheLogAndCleansUp(t *testing.T) {
	unknownDirective := []string{"--no-such-directive", "x"}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"server", Config{Args: unknownDirective}},
		{"sentinel", Config{Args: unknownDirective, Sentinel: &Monitor{Name: "locks", MasterAddr: "127.0.0.1:6379"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			if _, err := Start(context.Background(), tt.cfg); err == nil {
				t.Fatal("Start succeeded with an unknown directive")
			} else if msg := err.Error(); !strings.Contains(msg, "no-such-directive") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line quoting the complaint", msg)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("a failed Start left %d entries in the temporary directory", len(left))
			}
		})
	}
}

func TestStartWithoutBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Start(context.Background(), Config{}); !errors.Is(err, ErrNoBinary) {
		t.Fatalf("err = %v, want ErrNoBinary", err)
	}
}

func TestStartGivesUpWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
