package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestInspectHashLocks is a Redisson user: hash locks under a namespace defined
// on the command line. Without --type the namespace counts strings and finds none; inspect must
// say that the pattern matches hash keys and how to count them, and --type hash must count them.
func TestInspectHashLocks(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, k := range []string{"redisson:lock:a", "redisson:lock:b"} {
		// Redisson's lock: a hash of owner -> reentrancy count, with a lease time.
		if err := c.HSet(ctx, k, "e3b0c442-owner:1", 1).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.PExpire(ctx, k, 30*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"LOCK_EXPORTER_REDIS_ADDR": srv.Addr}

	code, stdout, stderr := runCmd(t, vars, "inspect", "--namespace", "redisson=redisson:lock:*")
	if code != exitOK || !strings.Contains(firstLine(stdout), "0 live keys") {
		t.Fatalf("without --type: status %d, stdout %q", code, stdout)
	}
	if want := `note: pattern "redisson:lock:*" matches 2 hash keys, which namespace "redisson" does not count: declare --type hash`; !strings.Contains(stderr, want) {
		t.Errorf("without --type: stderr %q, want %q", stderr, want)
	}

	code, stdout, stderr = runCmd(t, vars, "inspect", "--namespace", "redisson=redisson:lock:*", "--type", "hash")
	if code != exitOK || !strings.Contains(firstLine(stdout), "2 live keys") || strings.Contains(stderr, "note: pattern") {
		t.Errorf("--type hash: status %d, stdout %q, stderr %q; want 2 live keys and no type note", code, stdout, stderr)
	}

	// --type names the flags' namespaces only; alone, or with a bad type, it is a usage error.
	for _, args := range [][]string{
		{"inspect", "--type", "hash"},
		{"inspect", "--namespace", "r=redisson:lock:*", "--type", "zset"},
	} {
		if code, _, stderr := runCmd(t, vars, args...); code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want %d and one line", args, code, stderr, exitUsage)
		}
	}
}
