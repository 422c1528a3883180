package main

import (
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestSentinel scans the master a real Sentinel points to.
func TestSentinel(t *testing.T) {
	master := redistest.Start(t)
	seedLocks(t, master.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute}, "jobs:2": {ttl: time.Minute}})
	sentinel := redistest.StartSentinel(t, master, "locks")
	s := startServer(t, nil, "--redis.sentinel-addr", sentinel.Addr, "--redis.sentinel-master", "locks", "--namespace", "jobs=jobs:*")
	_, body := s.get(t, "/metrics", 5*time.Second)
	wantMetric(t, body, "lock_exporter_up", 1)
	wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 2)
}
