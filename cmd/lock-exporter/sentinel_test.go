package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/redistest"
)

// startSentinel runs a real redis-server in Sentinel mode monitoring master as "locks".
func startSentinel(t *testing.T, master *redistest.Server) string {
	t.Helper()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	content := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor locks 127.0.0.1 %d 1\nsentinel down-after-milliseconds locks 1000\n",
		port, dir, master.Port())
	if err := os.WriteFile(conf, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "sentinel.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(redistest.Binary(t), conf, "--sentinel")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	sc := redis.NewSentinelClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer sc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, err := sc.GetMasterAddrByName(context.Background(), "locks").Result(); err == nil && len(got) == 2 {
			return addr
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "sentinel.log"))
			t.Fatalf("sentinel on %s did not come up: %s", addr, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSentinel scans the master a real Sentinel points to.
func TestSentinel(t *testing.T) {
	master := redistest.Start(t)
	seedLocks(t, master.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "jobs:2": {ttl: time.Minute}})
	sentinel := startSentinel(t, master)
	s := startServer(t, nil, "--redis.sentinel-addr", sentinel, "--redis.sentinel-master", "locks", "--namespace", "jobs=jobs:*")
	_, body := s.get(t, "/metrics", 5*time.Second)
	wantMetric(t, body, "lock_exporter_up", 1)
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 2)
}
