package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// promtoolScript writes an executable that runs the promtool of tools/go.mod (3.x), as a
// promtool on a user's PATH would be, and returns its path.
func promtoolScript(t *testing.T) string {
	t.Helper()
	root := testkit.RepoRoot(t)
	script := filepath.Join(t.TempDir(), "promtool")
	body := fmt.Sprintf("#!/bin/sh\ncd %q && GOWORK=off exec %q tool -modfile=tools/go.mod promtool \"$@\"\n", root, testkit.GoBinary())
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestTestCommand runs `lockwatch-pack test` over a pack it wrote: the pack's own rule tests
// pass; after a hand edit that raises a threshold they fail, and the command says where; a
// missing promtool or a directory without tests is one clear line.
func TestTestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs promtool over a whole pack twice")
	}
	promtool := promtoolScript(t)
	written := t.TempDir()
	if code, _, stderr := runCmd("--out", written); code != 0 {
		t.Fatalf("writing the pack: exit %d: %s", code, stderr)
	}
	broken := t.TempDir()
	if code, _, stderr := runCmd("--out", broken); code != 0 {
		t.Fatalf("writing the pack: exit %d: %s", code, stderr)
	}
	alerts := filepath.Join(broken, "alerts", "lockwatch-alerts.yml")
	data, err := os.ReadFile(alerts)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.ReplaceAll(string(data), "lock_keys_without_ttl > 0", "lock_keys_without_ttl > 5")
	if edited == string(data) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(alerts, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyPath := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		path       string // PATH, when set
		wantCode   int
		wantOutput string // in promtool's report, which it writes to stdout and stderr
		wantErr    string // the last line on stderr
	}{
		{"the pack's own tests pass", []string{"--out", written, "--promtool", promtool}, "", 0, "SUCCESS", ""},
		{"a hand-broken rule fails", []string{"--out", broken, "--promtool", promtool}, "", 1, "alertname: LockKeyWithoutTTL",
			"rule tests under " + filepath.Join(broken, "alerts", "tests") + " failed"},
		{"no promtool on PATH", []string{"--out", written}, emptyPath, 1, "",
			"promtool not found on PATH: install Prometheus's promtool (3.x, or 2.x) or name it with --promtool"},
		{"named promtool missing", []string{"--out", written, "--promtool", filepath.Join(emptyPath, "promtool")}, "", 1, "", "promtool not found: --promtool"},
		{"no tests there", []string{"--out", emptyPath, "--promtool", promtool}, "", 2, "", "no rule tests in " + filepath.Join(emptyPath, "alerts", "tests")},
		{"unknown flag", []string{"--promtol", promtool}, "", 2, "", "unknown flag: --promtol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path != "" {
				t.Setenv("PATH", tt.path)
			}
			code, stdout, stderr := runCmd(append([]string{"test"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.wantOutput) {
				t.Errorf("output lacks %q:\n%s%s", tt.wantOutput, stdout, stderr)
			}
			if tt.wantErr == "" {
				if stderr != "" {
					t.Errorf("stderr: %s", stderr)
				}
				return
			}
			last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
			if !strings.HasPrefix(last, "lockwatch-pack: ") || !strings.Contains(last, tt.wantErr) {
				t.Errorf("last line of stderr %q does not say %q", last, tt.wantErr)
			}
		})
	}
}

func TestTestHelp(t *testing.T) {
	code, stdout, _ := runCmd("test", "--help")
	if code != 0 || !strings.HasPrefix(stdout, testUsage) || !strings.Contains(stdout, "--promtool") {
		t.Errorf("exit %d, usage %q", code, stdout)
	}
}
