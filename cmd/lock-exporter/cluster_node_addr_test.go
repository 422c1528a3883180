package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestClusterNodeGivenAsRedisAddrIsNamed: --redis.addr pointed at one node of a Redis Cluster
// scans that node's keys only. The scrape stays what it is (lock_exporter_up 1, that node's
// keys), but the exporter's log and inspect's stderr say so and name --redis.cluster-addr;
// before, both were silent and a third of the locks looked like all of them.
func TestClusterNodeGivenAsRedisAddrIsNamed(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	locks := map[string]seed{}
	for _, k := range []string{"jobs:a", "jobs:b", "jobs:c", "jobs:d", "jobs:e", "jobs:f", "jobs:g", "jobs:h"} {
		locks[k] = seed{ttl: time.Minute}
	}
	seedLocks(t, cluster.Client(t), locks)
	node := cluster.Nodes[0].Addr
	const want = "is a Redis Cluster node"

	code, stdout, stderr := runCmd(t, nil, "inspect", "--redis.addr", node, "--namespace", "jobs=jobs:*")
	if code != exitOK {
		t.Fatalf("inspect: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "--redis.cluster-addr") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("inspect stderr %q: want one line saying %q and naming --redis.cluster-addr (stdout %q)", stderr, want, stdout)
	}

	s := startServer(t, nil, "--redis.addr", node, "--namespace", "jobs=jobs:*")
	s.get(t, "/metrics", 5*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the exporter's log:\n%s", want, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if log := s.stderr.String(); strings.Count(log, want) != 1 || !strings.Contains(log, "--redis.cluster-addr") {
		t.Errorf("want the warning once, naming --redis.cluster-addr:\n%s", log)
	}
}

// TestStandaloneRedisAddrHasNoClusterWarning: a plain Redis gets no such line.
func TestStandaloneRedisAddrHasNoClusterWarning(t *testing.T) {
	srv := redistest.Start(t)
	code, _, stderr := runCmd(t, nil, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	if code != exitOK || stderr != "" {
		t.Errorf("inspect: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
}
