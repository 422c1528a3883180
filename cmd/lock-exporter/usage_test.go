package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/internal/testharness/clitest"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestBadInput checks that every bad flag, variable or file exits 2 with exactly one line on
// stderr that names the bad value, and touches nothing else (no Redis is running here).
func TestBadInput(t *testing.T) {
	ns := "--namespace=jobs=jobs:*"
	badWeb := testkit.WriteFile(t, "web.yml", "basic_auth_users:\n  admin: not-a-bcrypt-hash\n")
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{ns, "--redis.adress", "x:1"}, "unknown flag: --redis.adress"},
		{"bad integer", nil, []string{ns, "--scan.batch-size", "lots"}, `--scan.batch-size "lots": not a number`},
		{"bad duration", nil, []string{ns, "--scan.timeout", "5x"}, `--scan.timeout "5x": invalid duration "5x"`},
		{"bad environment value", map[string]string{"LOCK_EXPORTER_SCAN_MAX_KEYS": "many"}, []string{ns}, `LOCK_EXPORTER_SCAN_MAX_KEYS="many": not a number`},
		{"integer out of range", nil, []string{ns, "--scan.max-keys", "99999999999999999999"}, `--scan.max-keys "99999999999999999999": number out of range`},
		{"bad bool", nil, []string{ns, "--redis.tls-insecure-skip-verify=maybe"}, `--redis.tls-insecure-skip-verify "maybe": want true or false`},
		{"flag without its value", nil, []string{ns, "--scan.top-k"}, `--scan.top-k: needs a value`},
		{"bad number in file", nil, []string{"--config.file", testkit.WriteFile(t, "num.yml", "scan:\n  top_k: many\nnamespaces: [{name: a, pattern: 'a:*'}]\n")}, `line 2: invalid value "many" (want int)`},
		{"list for a value in file", nil, []string{"--config.file", testkit.WriteFile(t, "list.yml", "redis:\n  addr: [a, b]\nnamespaces: [{name: a, pattern: 'a:*'}]\n")}, `line 2: want a single string value`},
		{"no namespace", nil, nil, "no namespace configured"},
		{"namespace without =", nil, []string{"--namespace", "jobs"}, `--namespace "jobs": want NAME=PATTERN`},
		{"empty name", nil, []string{"--namespace", "=jobs:*"}, "empty name"},
		{"empty pattern", nil, []string{"--namespace", "jobs="}, `pattern "": empty pattern`},
		{"invalid pattern", nil, []string{"--namespace", "jobs=jobs:[ab"}, `pattern "jobs:[ab": unterminated [`},
		{"duplicate across flag and file", nil, []string{ns, "--config.file", testkit.WriteFile(t, "dup.yml", "namespaces: [{name: jobs, pattern: 'x:*'}]\n")}, `duplicate namespace name "jobs"`},
		// Documented limit: the variable is split at commas, so this pattern's class is cut open.
		{"comma in an environment pattern", map[string]string{"LOCK_EXPORTER_NAMESPACE": "a=a:[,;]*"}, nil, `pattern "a:[": unterminated [`},
		{"duplicate in environment", map[string]string{"LOCK_EXPORTER_NAMESPACE": "a=a:*,a=b:*"}, nil, `duplicate namespace name "a"`},
		// A namespace from the environment is named by its variable, as a bad scan setting there is:
		// the message said --namespace, which the command line did not have.
		{"namespace without = in environment", map[string]string{"LOCK_EXPORTER_NAMESPACE": "jobs"}, nil, `LOCK_EXPORTER_NAMESPACE="jobs": want NAME=PATTERN`},
		{"empty pattern in environment", map[string]string{"LOCK_EXPORTER_NAMESPACE": "a=a:*,jobs="}, nil, `LOCK_EXPORTER_NAMESPACE="jobs=": namespace "jobs": pattern "": empty pattern`},
		{"unreadable file", nil, []string{"--config.file", "/nonexistent/exporter.yml"}, "config file /nonexistent/exporter.yml: no such file or directory"},
		{"unknown field", nil, []string{"--config.file", testkit.WriteFile(t, "typo.yml", "namespaces:\n  - name: a\n    patern: 'a:*'\n")}, `line 3: unknown field "patern"`},
		{"bad duration in file", nil, []string{"--config.file", testkit.WriteFile(t, "dur.yml", "scan:\n  timeout: soon\nnamespaces: [{name: a, pattern: 'a:*'}]\n")}, `line 2: invalid duration "soon"`},
		{"zero top-k", nil, []string{ns, "--scan.top-k", "0"}, "scan.top-k must be at least 1, got 0"},
		{"top-k above the bound", nil, []string{ns, "--scan.top-k", "101"}, "scan.top-k must be at most 100, got 101"},
		{"top-k above the bound from environment", map[string]string{"LOCK_EXPORTER_SCAN_TOP_K": "5000"}, []string{ns}, "scan.top-k must be at most 100, got 5000"},
		{"batch size above the bound", nil, []string{ns, "--scan.batch-size", "10001"}, "scan.batch-size must be at most 10000, got 10001"},
		{"unknown scan mode", nil, []string{ns, "--scan.mode", "index"}, `scan.mode "index": want auto or walk`},
		{"unknown scan mode from environment", map[string]string{"LOCK_EXPORTER_SCAN_MODE": "fast"}, []string{ns}, `scan.mode "fast": want auto or walk`},
		{"negative backstop pace", nil, []string{ns, "--scan.backstop-keys-per-second", "-1"}, "scan.backstop-keys-per-second must not be negative, got -1"},
		{"zero index key budget", nil, []string{ns, "--scan.index-key-budget", "0"}, "scan.index-key-budget must be at least 1, got 0"},
		{"bad takeover window", nil, []string{ns, "--scan.takeover-window", "soon"}, `--scan.takeover-window "soon": invalid duration "soon"`},
		{"zero takeover window", nil, []string{ns, "--scan.takeover-window", "0s"}, "scan.takeover-window must be positive, got 0s"},
		{"negative takeover window from environment", map[string]string{"LOCK_EXPORTER_SCAN_TAKEOVER_WINDOW": "-1m"}, []string{ns}, "scan.takeover-window must be positive, got -1m0s"},
		{"negative namespace takeover window in file", nil, []string{"--config.file", testkit.WriteFile(t, "tw.yml", "namespaces: [{name: a, pattern: 'a:*', takeover_window: -1s}]\n")}, `namespace "a": takeover window -1s is negative`},
		{"bad redis address", nil, []string{ns, "--redis.addr", "redis.internal"}, `redis.addr "redis.internal": want host:port`},
		{"password in URL", nil, []string{ns, "--redis.addr", "redis://u:secret@x:1"}, "has a password"},
		{"missing password file", nil, []string{ns, "--redis.password-file", "/nonexistent/pw"}, "redis.password-file: the file given in password_file: no such file"},
		{"TLS file without rediss", nil, []string{ns, "--redis.tls-ca-file", "/etc/hostname"}, "need rediss:// addresses"},
		{"cluster and sentinel", nil, []string{ns, "--redis.cluster-addr", "a:1", "--redis.sentinel-addr", "b:1"}, "exclusive"},
		// A stray quote in a list flag is part of an address, judged as one (it was encoding/csv's
		// `parse error on line 1, column 4: bare " in non-quoted-field`).
		{"quote in a list flag", nil, []string{ns, "--redis.cluster-addr", `a:1,"b:1`}, `redis.cluster-addr "\"b:1": host "\"b": want a DNS name or an IP address`},
		{"empty item in a list flag", nil, []string{ns, "--redis.sentinel-addr", "a:1,,b:1", "--redis.sentinel-master", "m"}, `redis.sentinel-addr "": empty address`},
		{"redis port not a number", nil, []string{ns, "--redis.addr", "redis:port"}, `redis.addr "redis:port": port "port": want a number from 1 to 65535`},
		{"redis port zero in a URL", nil, []string{ns, "--redis.addr", "redis://redis:0"}, `redis.addr "redis://redis:0": port "0": want a number from 1 to 65535`},
		{"bad log level", nil, []string{ns, "--log.level", "loud"}, `--log.level "loud": want debug, info, warn or error`},
		{"bad log format", nil, []string{ns, "--log.format", "xml"}, `--log.format "xml": want logfmt or json`},
		{"bad web config", nil, []string{ns, "--web.config.file", badWeb}, "--web.config.file"},
		{"missing web config", nil, []string{ns, "--web.config.file", "/nonexistent/web.yml"}, "--web.config.file"},
		{"bad telemetry path", nil, []string{ns, "--web.telemetry-path", "metrics"}, `--web.telemetry-path "metrics"`},
		{"listen address without colon", nil, []string{ns, "--web.listen-address", "9866"}, `--web.listen-address "9866": want [host]:port`},
		{"listen address without port", nil, []string{ns, "--web.listen-address", "127.0.0.1:"}, `--web.listen-address "127.0.0.1:": want [host]:port`},
		{"listen port not a number", nil, []string{ns, "--web.listen-address", ":notaport"}, `--web.listen-address ":notaport": port "notaport": want a number`},
		{"listen port out of range", nil, []string{ns, "--web.listen-address", ":65536"}, `--web.listen-address ":65536": port "65536"`},
		{"empty listen address", nil, []string{ns, "--web.listen-address", ""}, `--web.listen-address "": want [host]:port`},
		{"empty listen address in a list", nil, []string{ns, "--web.listen-address", "127.0.0.1:0,"}, `--web.listen-address "": want [host]:port`},
		{"bad listen address after a good one", nil, []string{ns, "--web.listen-address", "127.0.0.1:0", "--web.listen-address", "9866"}, `--web.listen-address "9866"`},
		{"bad listen address from environment", map[string]string{"LOCK_EXPORTER_WEB_LISTEN_ADDRESS": "9866"}, []string{ns}, `LOCK_EXPORTER_WEB_LISTEN_ADDRESS="9866": want [host]:port`},
		{"bad telemetry path from environment", map[string]string{"LOCK_EXPORTER_WEB_TELEMETRY_PATH": "metrics"}, []string{ns}, `LOCK_EXPORTER_WEB_TELEMETRY_PATH="metrics": want a clean absolute path`},
		{"negative max requests from environment", map[string]string{"LOCK_EXPORTER_WEB_MAX_REQUESTS": "-1"}, []string{ns}, `LOCK_EXPORTER_WEB_MAX_REQUESTS="-1": want a positive number`},
		{"negative max connections", nil, []string{ns, "--web.max-connections", "-1"}, `--web.max-connections -1: want a positive number`},
		{"demo is not a command of lock-exporter", nil, []string{"demo"}, `unknown command "demo"`},
		{"stray argument", nil, []string{ns, "serve"}, `unexpected argument "serve"`},
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"inspect unknown namespace", nil, []string{"inspect", ns, "nope"}, `unknown namespace "nope" (configured: jobs)`},
		{"inspect two namespaces", nil, []string{"inspect", ns, "--namespace", "b=b:*"}, "name the namespace to inspect"},
		{"inspect bad limit", nil, []string{"inspect", ns, "--limit", "0"}, "--limit must be at least 1, got 0"},
		{"inspect limit above the bound", nil, []string{"inspect", ns, "--limit", "101"}, "--limit must be at most 100, got 101"},
		{"inspect unknown flag", nil, []string{"inspect", ns, "--top"}, "unknown flag: --top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.vars, tt.args...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d (stderr %q)", code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "lock-exporter") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr %q, want one line containing %q", stderr, tt.want)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "--redis.addr"},
		{[]string{"-h"}, "--web.listen-address"},
		{[]string{"inspect", "--help"}, "--limit"},
		{[]string{"--version"}, "lock-exporter, version "},
		{[]string{"--version", "--scan.top-k", "lots"}, "go version:"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCmd(t, nil, tt.args...)
		if code != exitOK || !strings.Contains(stdout, tt.want) || stderr != "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 0 and %q on stdout", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestPrecedence checks flag over environment over file over default, field by field.
func TestPrecedence(t *testing.T) {
	file := testkit.WriteFile(t, "exporter.yml", `
redis: {addr: "file:1"}
scan: {batch_size: 11, max_keys: 22, timeout: 3s}
namespaces: [{name: fromfile, pattern: "f:*", expected_ttl: 60s}]
`)
	vars := map[string]string{
		"LOCK_EXPORTER_CONFIG_FILE":    file,
		"LOCK_EXPORTER_SCAN_MAX_KEYS":  "33",
		"LOCK_EXPORTER_SCAN_TIMEOUT":   "4s",
		"LOCK_EXPORTER_NAMESPACE":      "fromenv=e:*",
		"LOCK_EXPORTER_REDIS_PASSWORD": "pw",
	}
	base, _, stderr := clitest.NewEnv(vars)
	st, _, err := parseSettings(&env{Env: base}, "lock-exporter", []string{"--scan.timeout", "5s"}, func(fs *pflag.FlagSet, st *settings) {
		defineConfigFlags(fs, st)
	}, false)
	if err != nil {
		t.Fatalf("parseSettings: %v (%s)", err, stderr)
	}
	got := st.cfg
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"addr from file", got.Redis.Addr, "file:1"},
		{"batch size from file", got.Scan.BatchSize, 11},
		{"max keys: environment over file", got.Scan.MaxKeys, 33},
		{"timeout: flag over environment", got.Scan.Timeout, exporterconfig.Duration(5 * time.Second)},
		{"top-k default", got.Scan.TopK, 5},
		{"password from environment", got.Redis.Password, "pw"},
		{"namespaces: file then environment", len(got.Namespaces), 2},
		{"file namespace kept its TTL", got.Namespaces[0].ExpectedTTL, exporterconfig.Duration(time.Minute)},
		{"environment namespace", got.Namespaces[1].Name, "fromenv"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
