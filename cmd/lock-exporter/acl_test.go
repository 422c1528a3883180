package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

const (
	aclUser     = testkit.ACLUser
	aclPassword = "acl-test-password"
)

func without(rules []string, drop ...string) []string {
	var out []string
	for _, r := range rules {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

var aclVars = map[string]string{"LOCK_EXPORTER_REDIS_USERNAME": aclUser, "LOCK_EXPORTER_REDIS_PASSWORD": aclPassword}

// TestLeastPrivilegeACL runs the exporter and inspect as a user with exactly the documented ACL,
// on a single server and on a Redis Cluster; checks that the user cannot read or change a lock;
// and that each granted command is needed.
func TestLeastPrivilegeACL(t *testing.T) {
	rules := testkit.DocumentedACL(t, aclPassword)
	ctx := context.Background()

	t.Run("single server", func(t *testing.T) {
		srv := redistest.Start(t)
		admin := srv.Client(t)
		seedLocks(t, admin, map[string]seed{"jobs:1": {ttl: time.Minute, idle: 120}, "jobs:2": {idle: 30}})
		if err := admin.Set(ctx, lockkeys.Fence("jobs:1"), 77, 0).Err(); err != nil {
			t.Fatal(err)
		}
		testkit.SetACL(t, srv, rules)

		s := startServer(t, aclVars, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
		code, body := s.get(t, "/metrics", 5*time.Second)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d", code)
		}
		wantMetric(t, body, "lock_exporter_up", 1)
		wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 2)
		wantMetric(t, body, `lock_keys_without_ttl{lock_namespace="jobs"}`, 1)
		wantMetric(t, body, "lock_exporter_idle_time_available", 1)
		if v, ok := metricValue(body, `lock_key_idle_max_seconds{lock_namespace="jobs"}`); !ok || v < 120 {
			t.Errorf("lock_key_idle_max_seconds = %v (present %v), want ~120", v, ok)
		}

		code, stdout, stderr := runCmd(t, aclVars, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
		if code != exitOK || !regexpMatch(`(?m)^jobs:1\s+\S+\s+2m\d?s\s+77\s+-$`, stdout) || stderr != "" {
			t.Errorf("inspect as the ACL user: status %d, stdout %q, stderr %q; want jobs:1 with fence 77", code, stdout, stderr)
		}

		user := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: aclUser, Password: aclPassword, DisableIdentity: true})
		defer user.Close()
		for _, cmd := range [][]any{{"GET", "jobs:1"}, {"SET", "jobs:1", "x"}, {"DEL", "jobs:1"}, {"PEXPIRE", "jobs:1", 1}, {"KEYS", "*"}, {"DUMP", "jobs:1"}} {
			if err := user.Do(ctx, cmd...).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
				t.Errorf("%v as the exporter's user: %v, want NOPERM", cmd, err)
			}
		}

		// Every granted command is used: without it, inspect (the same scan) fails or
		// loses the fence values. Redis answered, so the namespace is FAILED (status 3), not
		// "cannot read Redis" (status 1).
		for _, drop := range [][]string{{"+scan"}, {"+pttl"}, {"+object|idletime"}} {
			testkit.SetACL(t, srv, without(rules, drop...))
			code, stdout, stderr := runCmd(t, aclVars, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
			if code != exitPartial || !regexpMatch(`^namespace "jobs" .*FAILED: .*NOPERM`, firstLine(stdout)) {
				t.Errorf("ACL without %v: inspect status %d, stdout %q, stderr %q; want %d and a FAILED summary naming jobs", drop, code, stdout, stderr, exitPartial)
			}
		}
		testkit.SetACL(t, srv, without(rules, "(+get", "%R~*:fence", "%R~*:holder)"))
		_, stdout, stderr = runCmd(t, aclVars, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
		if !strings.Contains(stderr, "fence values unavailable: NOPERM") || !strings.Contains(stderr, "holders unavailable: NOPERM") {
			t.Errorf("ACL without the GET selector: stderr %q, want the fence and holder notes", stderr)
		}
		// Unreadable is "?" in both columns; "-" would claim the lock has no holder.
		if !regexpMatch(`(?m)^jobs:1\s+\S+\s+2m\d?s\s+\?\s+\?$`, stdout) {
			t.Errorf("ACL without the GET selector: stdout %q, want FENCE and HOLDER ?", stdout)
		}
		// The exporter reads holder keys too; a user without that grant loses the holder series only.
		_, body = startServer(t, aclVars, "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*").get(t, "/metrics", 5*time.Second)
		wantMetric(t, body, "lock_exporter_up", 1)
		wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 2)
		wantMetric(t, body, `lock_exporter_scrape_success{lock_namespace="jobs"}`, 1)
	})

	t.Run("cluster", func(t *testing.T) {
		cluster := redistest.StartCluster(t, 3, 0)
		admin := cluster.Client(t)
		locks := map[string]seed{}
		for _, k := range []string{"jobs:a", "jobs:b", "jobs:c", "jobs:d", "jobs:e", "jobs:f"} {
			locks[k] = seed{ttl: time.Minute, idle: 60}
		}
		seedLocks(t, admin, locks)
		if err := admin.Set(ctx, lockkeys.Fence("jobs:a"), 5, 0).Err(); err != nil {
			t.Fatal(err)
		}
		for _, n := range cluster.Nodes {
			testkit.SetACL(t, n, rules)
		}
		addrs := strings.Join(cluster.Addrs(), ",")
		s := startServer(t, aclVars, "--redis.cluster-addr", addrs, "--namespace", "jobs=jobs:*")
		_, body := s.get(t, "/metrics", 5*time.Second)
		wantMetric(t, body, "lock_exporter_up", 1)
		wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 6)
		wantMetric(t, body, `lock_exporter_scrape_complete{lock_namespace="jobs"}`, 1)
		// The documented grants are enough for the cluster's index too (one change feed per
		// master, CLUSTER SLOTS for slot moves): served by the index, not walked.
		wantMetric(t, body, `lock_exporter_scan_mode{lock_namespace="jobs",mode="index",reason=""}`, 1)

		code, stdout, stderr := runCmd(t, aclVars, "inspect", "--redis.cluster-addr", addrs, "--namespace", "jobs=jobs:*")
		if code != exitOK || !regexpMatch(`(?m)^jobs:a\s+\S+\s+1m\d?s\s+5\s+-$`, stdout) || stderr != "" {
			t.Errorf("inspect on the cluster as the ACL user: status %d, stdout %q, stderr %q", code, stdout, stderr)
		}

		// Half through a reshard of jobs:a's slot (the key on the target, which reads it only
		// after ASKING), the documented grants still read every lock. (MIGRATE recreates the
		// key on the target: its idle time starts again from 0.)
		var to *redistest.Server
		for _, m := range cluster.Masters(t) {
			if m != cluster.MasterFor(t, "jobs:a") {
				to = m
			}
		}
		move := cluster.BeginSlotMigration(t, cluster.Slot(t, "jobs:a"), to)
		code, stdout, stderr = runCmd(t, aclVars, "inspect", "--redis.cluster-addr", addrs, "--namespace", "jobs=jobs:*")
		if code != exitOK || !regexpMatch(`(?m)^jobs:a\s+\S+\s+\S+\s+5\s+-$`, stdout) {
			t.Errorf("inspect during a slot move as the ACL user: status %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		_, body = s.get(t, "/metrics", 5*time.Second)
		wantMetric(t, body, `lock_keys{lock_namespace="jobs"}`, 6)
		wantMetric(t, body, `lock_exporter_scrape_success{lock_namespace="jobs"}`, 1)
		move.Finish(t)

		for _, n := range cluster.Nodes {
			testkit.SetACL(t, n, without(rules, "+cluster|slots"))
		}
		if code, stdout, _ := runCmd(t, aclVars, "inspect", "--redis.cluster-addr", addrs, "--namespace", "jobs=jobs:*"); code != exitPartial || !strings.Contains(firstLine(stdout), "FAILED") {
			t.Errorf("ACL without +cluster|slots: inspect status %d, stdout %q; want %d and FAILED", code, stdout, exitPartial)
		}
	})
}

// TestInspectACLLimitedToOnePrefix: an ACL user whose key pattern is
// jobs:* inspects orders. Redis answers and refuses the namespace's keys, so inspect prints a
// FAILED summary naming orders and exits 3; only unreachable Redis or refused credentials exit 1.
func TestInspectACLLimitedToOnePrefix(t *testing.T) {
	srv := redistest.Start(t)
	seedLocks(t, srv.Client(t), map[string]seed{"jobs:1": {ttl: time.Minute, idle: 10}, "orders:1": {ttl: time.Minute, idle: 10}})
	var rules []string
	for _, r := range testkit.DocumentedACL(t, aclPassword) {
		if r == "%R~*" {
			r = "%R~jobs:*"
		}
		rules = append(rules, r)
	}
	testkit.SetACL(t, srv, rules)

	code, stdout, stderr := runCmd(t, aclVars, "inspect", "--redis.addr", srv.Addr, "--namespace", "orders=orders:*")
	if code != exitPartial || !regexpMatch(`^namespace "orders" .*FAILED: .*NOPERM`, firstLine(stdout)) {
		t.Errorf("orders under a jobs:* ACL: status %d, stdout %q, stderr %q; want %d and a FAILED summary naming orders", code, stdout, stderr, exitPartial)
	}
	code, stdout, _ = runCmd(t, aclVars, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	if code != exitOK || !strings.Contains(firstLine(stdout), "1 live key") {
		t.Errorf("jobs under a jobs:* ACL: status %d, stdout %q; want 0 and 1 key", code, stdout)
	}
	wrong := map[string]string{"LOCK_EXPORTER_REDIS_USERNAME": aclUser, "LOCK_EXPORTER_REDIS_PASSWORD": "not-the-password"}
	code, stdout, stderr = runCmd(t, wrong, "inspect", "--redis.addr", srv.Addr, "--namespace", "jobs=jobs:*")
	if code != exitFailure || stdout != "" || !strings.Contains(stderr, "cannot read Redis") || !strings.Contains(stderr, "WRONGPASS") {
		t.Errorf("wrong password: status %d, stdout %q, stderr %q; want %d and cannot read Redis", code, stdout, stderr, exitFailure)
	}
}
