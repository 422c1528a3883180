package packconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// locksFile describes two namespaces, one of Redisson hash locks, behind Sentinels with TLS and
// the password in a Secret.
const locksFile = `namespaces:
  - name: scheduler
    pattern: "scheduler:job:*"
    expected_ttl: 60s
    expected_renew_interval: 20s
    expected_max_hold: 30m
  - name: billing
    pattern: "redisson:billing:*"
    types: [hash]
    expected_ttl: 30s
    ends_by_expiry: true
redis:
  mode: sentinel
  addrs: ["rediss://sentinel-0.redis:26379", "rediss://sentinel-1.redis:26379"]
  sentinel_master: locks
  username: lock-exporter
  tls:
    secret: redis-tls
    ca_file: /etc/lock-exporter/tls/ca.crt
  password:
    secret: {name: redis-auth, key: exporter-password}
`

func TestParseLocks(t *testing.T) {
	cfg, err := Parse([]byte(locksFile))
	if err != nil {
		t.Fatal(err)
	}
	want := Namespaces{
		{Name: "scheduler", Pattern: "scheduler:job:*", ExpectedTTL: exporterconfig.Duration(time.Minute),
			ExpectedRenewInterval: exporterconfig.Duration(20 * time.Second), ExpectedMaxHold: exporterconfig.Duration(30 * time.Minute)},
		{Name: "billing", Pattern: "redisson:billing:*", Types: []string{"hash"},
			ExpectedTTL: exporterconfig.Duration(30 * time.Second), EndsByExpiry: true},
	}
	if !reflect.DeepEqual(cfg.Namespaces, want) || !cfg.DescribesLocks() {
		t.Errorf("namespaces %+v\nwant %+v", cfg.Namespaces, want)
	}
	got := cfg.Redis.Exporter()
	wantRedis := exporterconfig.Redis{
		SentinelAddrs:  []string{"rediss://sentinel-0.redis:26379", "rediss://sentinel-1.redis:26379"},
		SentinelMaster: "locks", Username: "lock-exporter",
		TLS:          exporterconfig.TLS{CAFile: "/etc/lock-exporter/tls/ca.crt"},
		PasswordFile: PasswordMountDir + "/password",
	}
	if !reflect.DeepEqual(got, wantRedis) {
		t.Errorf("exporter redis %+v\nwant %+v", got, wantRedis)
	}
	if Default().DescribesLocks() {
		t.Error("the default configuration describes locks")
	}
}

// TestNamespaceErrorsAreTheExportersOwn: a namespaces: list the exporter refuses is refused in
// the pack configuration with the exporter's message, at the pack file's line (the same text
// at the same lines gives the same line).
func TestNamespaceErrorsAreTheExportersOwn(t *testing.T) {
	for _, tt := range []struct{ name, namespaces, want string }{
		{"unknown field", "namespaces:\n  - name: a\n    patern: 'a:*'\n", `line 3: unknown field "patern"`},
		{"bad duration", "namespaces:\n  - name: a\n    pattern: 'a:*'\n    expected_ttl: soon\n", `line 4: invalid duration "soon" (want e.g. 10s, 1m30s)`},
		{"empty pattern", "namespaces:\n  - name: a\n    pattern: 'a:*'\n  - name: b\n    pattern: ''\n", `namespace "b": pattern "": empty pattern`},
		{"duplicate name", "namespaces:\n  - {name: a, pattern: 'a:*'}\n  - {name: a, pattern: 'b:*'}\n", `duplicate namespace name "a"`},
		{"unknown type", "namespaces:\n  - {name: a, pattern: 'a:*', types: [list]}\n", `namespace "a": type "list" is not "string" or "hash"`},
		{"renew not below TTL", "namespaces:\n  - {name: a, pattern: 'a:*', expected_ttl: 10s, expected_renew_interval: 10s}\n", "shorter than expected TTL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exporterFile := filepath.Join(t.TempDir(), "lock-exporter.yml")
			if err := os.WriteFile(exporterFile, []byte(tt.namespaces), 0o600); err != nil {
				t.Fatal(err)
			}
			exporterErr := exporterconfig.ErrInvalid
			if cfg, err := exporterconfig.Load(exporterFile); err != nil {
				exporterErr = err
			} else {
				exporterErr = cfg.Validate()
			}
			if exporterErr == nil || !strings.Contains(exporterErr.Error(), tt.want) {
				t.Fatalf("lock-exporter says %v, want %q", exporterErr, tt.want)
			}
			_, err := Parse([]byte(tt.namespaces + "redis: {addrs: ['redis:6379']}\n"))
			if err == nil || !errors.Is(err, exporterconfig.ErrInvalid) {
				t.Fatalf("Parse: %v, want the exporter's ErrInvalid", err)
			}
			problem := strings.TrimPrefix(exporterErr.Error(), "config file "+exporterFile+": ")
			if !strings.HasPrefix(err.Error(), "line ") || !strings.HasSuffix(err.Error(), problem) {
				t.Errorf("Parse: %q, want a line and then the exporter's %q", err, problem)
			}
		})
	}
}

// TestRedisErrors: each refusal names the setting and its line, and never shows what was
// written where a password goes.
func TestRedisErrors(t *testing.T) {
	const ns = "namespaces: [{name: a, pattern: 'a:*'}]\n"
	for _, tt := range []struct{ name, in, want string }{
		{"literal password", ns + "redis:\n  addrs: [redis:6379]\n  password: hunter2\n",
			"redis.password (line 4): a password is never written in the pack configuration"},
		{"literal password as the secret", ns + "redis:\n  addrs: [redis:6379]\n  password: {secret: hunter2}\n",
			`redis.password.secret (line 4): the value is not a mapping of settings`},
		{"relative password file", ns + "redis:\n  addrs: [redis:6379]\n  password: {file: hunter2}\n",
			"redis.password.file (line 4): want an absolute path"},
		{"secret and file", ns + "redis:\n  addrs: [redis:6379]\n  password: {file: /p, secret: {name: s}}\n",
			"redis.password (line 4): give secret or file, not both"},
		{"no redis", ns, "redis.addrs: give the address of the Redis"},
		{"redis without namespaces", "redis: {addrs: [redis:6379]}\n", "redis (line 1): describes the Redis of the locks, and namespaces is empty"},
		{"two addresses for one server", ns + "redis:\n  addrs: [a:1, b:1]\n", "redis.addrs (line 3): mode single takes one address, got 2"},
		{"unknown mode", ns + "redis:\n  mode: replica\n  addrs: [a:1]\n", `redis.mode (line 3): "replica" is not single, cluster or sentinel`},
		{"sentinel without master", ns + "redis:\n  mode: sentinel\n  addrs: [a:26379]\n", "redis.sentinel_master (line 3): give it with mode sentinel"},
		{"address the exporter refuses", ns + "redis:\n  addrs: [redis.internal]\n", `redis.addrs (line 3): redis.addr "redis.internal": want host:port`},
		{"TLS without rediss", ns + "redis:\n  addrs: [redis:6379]\n  tls: {ca_file: /ca.pem}\n", "redis.addrs (line 3): redis TLS settings need rediss:// addresses"},
		{"TLS file outside the secret", ns + "redis:\n  addrs: ['rediss://r:6379']\n  tls: {secret: t, ca_file: /ca.pem}\n",
			`redis.tls.ca_file (line 4): "/ca.pem" is not in /etc/lock-exporter/tls`},
		{"unknown key", ns + "redis:\n  addr: redis:6379\n", "redis.addr (line 3): unknown key; redis takes mode, addrs,"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: %v\nwant %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q shows the password or spans lines", err)
			}
			if tt.name == "literal password" && !errors.Is(err, ErrLiteralPassword) {
				t.Errorf("error %q does not match ErrLiteralPassword", err)
			}
		})
	}
}
