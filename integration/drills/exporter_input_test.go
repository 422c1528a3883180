package drills

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/lease"
)

// TestExporterBadInput runs the built binary on malformed configuration, unknown flags and an
// unreachable Redis: each gets exactly one line on stderr naming the problem, the documented
// exit status (2 for bad input, 1 for a runtime failure), and never a panic.
func TestExporterBadInput(t *testing.T) {
	defer checkLeaks(t)()
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	unreachable := testkit.UnusedAddr(t)
	ns := []string{"--namespace", "jobs=jobs:*"}

	cases := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		wantLine string // a piece of the one stderr line
	}{
		{"unknown flag", nil, []string{"--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{"unknown command", nil, []string{"bogus"}, 2, `unknown command "bogus"`},
		{"flag not a number", nil, append([]string{"--scan.batch-size", "many"}, ns...), 2, "--scan.batch-size"},
		{"bad duration flag", nil, append([]string{"--scan.timeout", "5x"}, ns...), 2, "5x"},
		{"negative batch size", nil, append([]string{"--scan.batch-size", "-1"}, ns...), 2, "batch"},
		{"namespace without pattern", nil, []string{"--namespace", "jobs"}, 2, "NAME=PATTERN"},
		{"unterminated pattern class", nil, []string{"--namespace", "jobs=jobs:[a-z"}, 2, "unterminated"},
		{"bad environment fallback", []string{"LOCK_EXPORTER_SCAN_TOP_K=x"}, ns, 2, "LOCK_EXPORTER_SCAN_TOP_K"},
		{"password in the Redis URL", nil, append([]string{"--redis.addr", "redis://:hunter2@127.0.0.1:6379"}, ns...), 2, "password"},
		{"no namespace at all", nil, nil, 2, "no namespace"},
		{"missing config file", nil, []string{"--config.file", filepath.Join(dir, "absent.yml")}, 2, "absent.yml"},
		{"malformed YAML", nil, []string{"--config.file", file("broken.yml", "namespaces: [\n  - name: a\n")}, 2, "line"},
		{"unknown config field", nil, []string{"--config.file", file("typo.yml", "namespaces:\n  - name: a\n    patern: 'a:*'\n")}, 2, `unknown field "patern"`},
		{"wrong config type", nil, []string{"--config.file", file("type.yml", "scan:\n  batch_size: lots\nnamespaces: [{name: a, pattern: 'a:*'}]\n")}, 2, "lots"},
		{"duplicate namespace", nil, []string{"--config.file", file("dup.yml", "namespaces: [{name: a, pattern: 'a:*'}, {name: a, pattern: 'b:*'}]\n")}, 2, "duplicate"},
		{"renew not shorter than TTL", nil, []string{"--config.file", file("ttl.yml", "namespaces: [{name: a, pattern: 'a:*', expected_ttl: 10s, expected_renew_interval: 10s}]\n")}, 2, "shorter"},
		{"binary garbage config", nil, []string{"--config.file", file("bin.yml", "\xff\xfe\x00\x01")}, 2, "bin.yml"},
		{"missing web config", nil, append([]string{"--web.config.file", filepath.Join(dir, "absent-web.yml")}, ns...), 2, "absent-web.yml"},
		{"malformed web config", nil, append([]string{"--web.config.file", file("web.yml", "basic_auth_users: [\n")}, ns...), 2, "web.yml"},
		{"listen address taken", nil, append([]string{"--web.listen-address", taken.Addr().String(), "--redis.addr", unreachable}, ns...), 1, taken.Addr().String()},
		{"inspect: Redis unreachable", nil, append([]string{"inspect", "--redis.addr", unreachable}, ns...), 1, "cannot read Redis"},
		{"inspect: unknown namespace", nil, append([]string{"inspect", "--redis.addr", unreachable, "nosuch"}, ns...), 2, "nosuch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, tc.env, tc.args...)
			line := strings.TrimSuffix(stderr, "\n")
			if code != tc.wantCode {
				t.Errorf("exit status %d, want %d; stderr: %q", code, tc.wantCode, stderr)
			}
			if line == "" || strings.Contains(line, "\n") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if !strings.Contains(line, tc.wantLine) {
				t.Errorf("stderr %q does not name %q", line, tc.wantLine)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("the exporter panicked:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout should stay empty on error: %q", stdout)
			}
		})
	}
}

// TestExporterStartsWithoutRedis: an unreachable Redis at start-up is not a configuration error.
// The exporter serves, reports lock_exporter_up 0 within the scrape deadline, and needs no
// restart once Redis appears.
func TestExporterStartsWithoutRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.WithArgs("--aclfile", aclFile(t)))
	srv.Kill() // its port now refuses connections
	a := newAudit(t)
	exporterBinary(t)
	defer checkLeaks(t)()
	stalls := testkit.StartStallMeter()
	defer stalls.Stop()
	ex := startExporter(t, a, aclEnv(), nil, "--redis.addr", srv.Addr, "--namespace", "jobs=drill:late:*")
	defer ex.stop()
	s := ex.scrape(t, a, 2*time.Second, "", "")
	if s.status != 200 || s.up(t) != 0 {
		t.Errorf("with Redis absent: status %d, lock_exporter_up %v; want 200 and 0", s.status, s.up(t))
	}
	if limit := 2*time.Second + stalls.Slack(time.Second); s.took > limit {
		t.Errorf("scrape with Redis absent took %s, want within its 2s scrape timeout (limit %s for the stalls seen)", s.took, limit)
	}
	// The exporter may write its warning after the scrape's reply, and its stderr reaches the
	// test through a pipe: wait for the line, then check there is exactly one.
	warnings := func() int { return strings.Count(ex.stderr.String(), "lock key scan failed") }
	testkit.Eventually(t, 10*time.Second, "the failed scan's warning", func() bool { return warnings() > 0 })
	if n := warnings(); n != 1 {
		t.Errorf("%d warnings for one failed scan, want 1:\n%s", n, ex.stderr.String())
	}

	srv.Restart()
	w := newWorker(t, a, "holder", srv.Addr, false)
	defer w.close()
	l, err := w.namespace(t, "jobs", lease.Policy{TTL: 30 * time.Second}).Acquire(context.Background(), "drill:late:1")
	if err != nil {
		t.Fatal(err)
	}
	a.learn(t, w.rdb, l.Key())
	testkit.Eventually(t, 10*time.Second, "the exporter to see Redis once it is up", func() bool {
		s := ex.scrape(t, a, 2*time.Second, "", "")
		keys, _ := s.gauge("lock_keys", "lock_namespace", "jobs")
		return s.up(t) == 1 && keys == 1
	})
	if err := l.Release(context.Background()); err != nil {
		t.Error(err)
	}
	ex.stop()
	w.close()
}
