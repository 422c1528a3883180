package exporterconfig

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestLoadFullSchema(t *testing.T) {
	pw := testkit.WriteFile(t, "pw", "secret\n")
	path := testkit.WriteFile(t, "config.yml", `
redis:
  addr: redis://exporter@redis.internal:6380/2
  username: exporter
  password_file: `+pw+`
scan:
  batch_size: 500
  max_keys: 20000
  top_k: 3
  timeout: 8s
  timeout_offset: 250ms
  mode: walk
  feed: notifications
  index_key_budget: 5000
  backstop_keys_per_second: 100
  takeover_window: 10m
namespaces:
  - name: scheduler
    pattern: "cordum:scheduler:job:*"
    expected_ttl: 60s
    expected_renew_interval: 20s
    expected_max_hold: 30m
    takeover_window: 2m
  - name: reconciler
    pattern: "cordum:reconciler:*"
    types: [string, hash]
    ends_by_expiry: true
`)
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Config{
		Redis: Redis{Addr: "redis://exporter@redis.internal:6380/2", Username: "exporter", PasswordFile: pw},
		Scan: Scan{BatchSize: 500, MaxKeys: 20000, TopK: 3,
			Timeout: Duration(8 * time.Second), TimeoutOffset: Duration(250 * time.Millisecond),
			Mode: "walk", Feed: "notifications", IndexKeyBudget: 5000, BackstopKeysPerSecond: 100, TakeoverWindow: Duration(10 * time.Minute)},
		Namespaces: []Namespace{
			{Name: "scheduler", Pattern: "cordum:scheduler:job:*",
				ExpectedTTL: Duration(time.Minute), ExpectedRenewInterval: Duration(20 * time.Second),
				ExpectedMaxHold: Duration(30 * time.Minute), TakeoverWindow: Duration(2 * time.Minute)},
			{Name: "reconciler", Pattern: "cordum:reconciler:*", Types: []string{"string", "hash"}, EndsByExpiry: true},
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	res, err := cfg.Redis.resolve()
	if err != nil || res.mode != standalone || res.addrs[0] != "redis.internal:6380" || res.db != 2 || res.username != "exporter" || res.tls {
		t.Errorf("resolve = %+v, %v", res, err)
	}
	opts := cfg.ScannerOptions()
	if opts.BatchSize != 500 || opts.MaxKeys != 20000 || opts.TopK != 3 || opts.Timeout != 8*time.Second ||
		opts.Namespaces[0].ExpectedRenewInterval != 20*time.Second || opts.TakeoverWindow != 10*time.Minute || opts.Feed != collectors.FeedNotifications ||
		opts.Namespaces[0].TakeoverWindow != 2*time.Minute || !opts.Namespaces[1].EndsByExpiry {
		t.Errorf("ScannerOptions = %+v", opts)
	}
}

func TestLoadKeepsDefaults(t *testing.T) {
	cfg, err := Load(testkit.WriteFile(t, "c.yml", "namespaces:\n  - {name: a, pattern: 'a:*'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Namespaces = []Namespace{{Name: "a", Pattern: "a:*"}}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load = %+v, want defaults plus the namespace", cfg)
	}
	if empty, err := Load(testkit.WriteFile(t, "empty.yml", "")); err != nil || !reflect.DeepEqual(empty, Defaults()) {
		t.Errorf("empty file: %+v, %v; want defaults", empty, err)
	}
}

// TestInvalid checks that every bad file or setting gives one line naming the bad value.
func TestInvalid(t *testing.T) {
	ca := testkit.WriteFile(t, "ca.pem", "not a certificate")
	tests := []struct {
		name    string
		file    string // YAML; namespaces a:* added when it has none
		env     func(*Config)
		wantErr string
	}{
		{"unknown field", "namespaces:\n  - name: a\n    patern: 'a:*'\n", nil, `line 3: unknown field "patern"`},
		{"unknown section", "redsi:\n  addr: x\n", nil, `line 1: unknown field "redsi"`},
		{"field given twice", "scan:\n  top_k: 2\n  top_k: 3\n", nil, `line 3: field "top_k" given twice (first at line 2)`},
		{"field given twice in a flow mapping", "namespaces: [{name: a, pattern: 'a:*', name: b}]\n", nil, `line 1: field "name" given twice (first at line 1)`},
		{"password in the file", "redis:\n  addr: x:1\n  password: hunter2\n", nil,
			`line 3: unknown field "password": the file holds no secrets; give password_file (a file holding it) or, for the redis section, LOCK_EXPORTER_REDIS_PASSWORD`},
		{"sentinel password in the file", "redis:\n  sentinel_password: hunter2\n", nil,
			`line 2: unknown field "sentinel_password": the file holds no secrets; give sentinel_password_file (a file holding it) or, for the redis section, LOCK_EXPORTER_REDIS_SENTINEL_PASSWORD`},
		{"bad duration", "scan:\n  timeout: soon\n", nil, `line 2: invalid duration "soon"`},
		{"bad number", "scan:\n  top_k: many\n", nil, `line 2: invalid value "many" (want int)`},
		{"fraction for a whole number", "scan:\n  top_k: 2.5\n", nil, `line 2: invalid value "2.5" (want int)`},
		{"not YAML", "redis: [\n", nil, "line"},
		{"bad bool", "redis:\n  tls: {insecure_skip_verify: maybe}\n", nil, `line 2: invalid value "maybe" (want bool)`},
		{"list for a value", "redis:\n  addr: [a, b]\n", nil, `line 2: want a single string value`},
		{"value for a list", "namespaces: jobs\n", nil, `line 1: want a list`},
		{"value for a section", "scan: 5\n", nil, `line 1: want a mapping of batch_size, max_keys, top_k, timeout, timeout_offset, max_concurrent_targets, mode, feed, index_key_budget, backstop_keys_per_second, takeover_window`},
		{"value for the whole file", "just text\n", nil, `line 1: want a mapping of redis, scan, namespaces, targets`},
		{"second document", "namespaces:\n  - {name: a, pattern: 'a:*'}\n---\nnamespaces:\n  - {name: b, pattern: 'b:*'}\n", nil, "more than one YAML document"},
		{"duplicate name", "namespaces:\n  - {name: a, pattern: 'a:*'}\n  - {name: a, pattern: 'b:*'}\n", nil, `duplicate namespace name "a"`},
		{"empty pattern", "namespaces:\n  - {name: a, pattern: ''}\n", nil, `namespace "a": pattern "": empty pattern`},
		{"invalid pattern", "namespaces:\n  - {name: a, pattern: 'a:[x'}\n", nil, "unterminated ["},
		{"empty name", "namespaces:\n  - {pattern: 'a:*'}\n", nil, "empty name"},
		{"unknown type", "namespaces:\n  - {name: a, pattern: 'a:*', types: [list]}\n", nil, `namespace "a": type "list" is not "string" or "hash"`},
		{"negative max hold", "namespaces:\n  - {name: a, pattern: 'a:*', expected_max_hold: -1s}\n", nil, `namespace "a": expected max hold -1s is negative`},
		{"renew not below TTL", "namespaces:\n  - {name: a, pattern: 'a:*', expected_ttl: 10s, expected_renew_interval: 10s}\n", nil, "shorter than expected TTL"},
		{"no namespace", "scan: {top_k: 2}\n", func(c *Config) { c.Namespaces = nil }, "no namespace configured"},
		{"zero batch", "scan: {batch_size: 0}\n", nil, "scan.batch-size must be at least 1, got 0"},
		{"top-k above the bound", "scan: {top_k: 101}\n", nil, "scan.top-k must be at most 100, got 101"},
		{"unknown scan mode", "scan: {mode: fast}\n", nil, `scan.mode "fast": want auto or walk`},
		{"unknown scan feed", "scan: {feed: pubsub}\n", nil, `scan.feed "pubsub": want auto, tracking or notifications`},
		{"negative offset", "scan: {timeout_offset: -1s}\n", nil, "scan.timeout-offset must not be negative"},
		{"zero takeover window", "scan: {takeover_window: 0s}\n", nil, "scan.takeover-window must be positive, got 0s"},
		{"bad takeover window", "scan: {takeover_window: later}\n", nil, `line 1: invalid duration "later"`},
		{"negative namespace takeover window", "namespaces:\n  - {name: a, pattern: 'a:*', takeover_window: -1m}\n", nil, `namespace "a": takeover window -1m0s is negative`},
		{"ends by expiry not a bool", "namespaces:\n  - {name: a, pattern: 'a:*', ends_by_expiry: often}\n", nil, `line 2: invalid value "often" (want bool)`},
		{"bad addr", "redis: {addr: 'redis.internal'}\n", nil, `redis.addr "redis.internal": want host:port`},
		{"bad scheme", "redis: {addr: 'http://x:1'}\n", nil, `scheme "http"`},
		{"port not a number", "redis: {addr: 'redis:port'}\n", nil, `redis.addr "redis:port": port "port": want a number from 1 to 65535`},
		{"port out of range", "redis: {addr: 'x:65536'}\n", nil, `port "65536": want a number from 1 to 65535`},
		{"host with a space", "redis: {cluster_addrs: ['x:1', 'redis host:1']}\n", nil, `redis.cluster-addr "redis host:1": host "redis host": want a DNS name or an IP address`},
		{"URL host with an empty label", "redis: {addr: 'rediss://redis..internal:6380'}\n", nil, `host "redis..internal": want a DNS name or an IP address`},
		{"password in URL", "redis: {addr: 'redis://u:pw@x:1'}\n", nil, "has a password"},
		{"cluster db", "redis: {cluster_addrs: ['redis://x:1/3']}\n", nil, "only database 0"},
		{"mixed TLS", "redis: {cluster_addrs: ['redis://x:1', 'rediss://y:1']}\n", nil, "mix of redis:// and rediss://"},
		{"cluster and sentinel", "redis: {cluster_addrs: ['x:1'], sentinel_addrs: ['y:1']}\n", nil, "exclusive"},
		{"addr and cluster", "redis: {addr: 'z:1', cluster_addrs: ['x:1']}\n", nil, `redis.addr "z:1" and redis.cluster-addr are exclusive`},
		{"sentinel without master", "redis: {sentinel_addrs: ['y:1']}\n", nil, "needs redis.sentinel-master"},
		{"TLS files without rediss", "redis: {tls: {ca_file: '" + ca + "'}}\n", nil, "need rediss:// addresses"},
		{"unreadable CA", "redis: {addr: 'rediss://x:1', tls: {ca_file: '/nonexistent/ca.pem'}}\n", nil, "redis.tls-ca-file"},
		{"CA not PEM", "redis: {addr: 'rediss://x:1', tls: {ca_file: '" + ca + "'}}\n", nil, "no PEM certificate"},
		{"cert without key", "redis: {addr: 'rediss://x:1', tls: {cert_file: '" + ca + "'}}\n", nil, "go together"},
		{"missing password file", "redis: {password_file: '/nonexistent/pw'}\n", nil, "redis.password-file: the file given in password_file: no such file"},
		{"password twice", "redis: {password_file: '" + ca + "'}\n", func(c *Config) { c.Redis.Password = "x" }, "keep one"},
		{"users differ", "redis: {addr: 'redis://a@x:1', username: b}\n", nil, `redis.username "b" differs`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(testkit.WriteFile(t, "c.yml", tt.file))
			if err == nil {
				if len(cfg.Namespaces) == 0 {
					cfg.Namespaces = []Namespace{{Name: "a", Pattern: "a:*"}}
				}
				if tt.env != nil {
					tt.env(&cfg)
				}
				err = cfg.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

// TestScanBounds checks both sides of every scan limit, and that the configuration and the
// scanner agree: a value the configuration accepts must not be refused later by NewScanner.
func TestScanBounds(t *testing.T) {
	tests := []struct {
		name    string
		set     func(*Scan)
		wantErr string // "" for valid
	}{
		{"batch size 1", func(s *Scan) { s.BatchSize = 1 }, ""},
		{"batch size at the bound", func(s *Scan) { s.BatchSize = collectors.MaxBatchSize }, ""},
		{"batch size above the bound", func(s *Scan) { s.BatchSize = collectors.MaxBatchSize + 1 }, "scan.batch-size must be at most 10000, got 10001"},
		{"top-k 1", func(s *Scan) { s.TopK = 1 }, ""},
		{"top-k at the bound", func(s *Scan) { s.TopK = collectors.MaxTopK }, ""},
		{"top-k above the bound", func(s *Scan) { s.TopK = collectors.MaxTopK + 1 }, "scan.top-k must be at most 100, got 101"},
		{"top-k zero", func(s *Scan) { s.TopK = 0 }, "scan.top-k must be at least 1, got 0"},
		{"max keys has no upper bound", func(s *Scan) { s.MaxKeys = 1 << 30 }, ""},
	}
	// NewScanner connects lazily; this client is never used.
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.Namespaces = []Namespace{{Name: "a", Pattern: "a:*"}}
			tt.set(&cfg.Scan)
			err := cfg.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
					t.Errorf("Validate: %v, want ErrInvalid containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			s, err := collectors.NewScanner(client, cfg.ScannerOptions())
			if err != nil {
				t.Fatalf("NewScanner refused a valid configuration: %v", err)
			}
			s.Close()
		})
	}
}

func TestParseNamespace(t *testing.T) {
	tests := []struct {
		in      string
		want    Namespace
		wantErr string
	}{
		{in: "jobs=jobs:*", want: Namespace{Name: "jobs", Pattern: "jobs:*"}},
		{in: "eq=a=b*", want: Namespace{Name: "eq", Pattern: "a=b*"}},
		{in: "jobs", wantErr: "want NAME=PATTERN"},
		{in: "=jobs:*", wantErr: "empty name"},
		{in: "jobs=", wantErr: "empty pattern"},
	}
	for _, tt := range tests {
		got, err := ParseNamespace(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseNamespace(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseNamespace(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load("/nonexistent/lock-exporter.yml")
	if !errors.Is(err, ErrInvalid) || err.Error() != "config file /nonexistent/lock-exporter.yml: no such file or directory" {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// A namespace the collectors refuse is reported as a configuration error with the collectors'
// problem alone: one line, without "invalid collector options", which says nothing the exit
// status does not.
func TestNamespaceErrorsCarryTheProblemOnly(t *testing.T) {
	_, err := ParseNamespace("jobs=jobs:[x")
	if err == nil || !errors.Is(err, ErrInvalid) {
		t.Fatalf("ParseNamespace: %v, want ErrInvalid", err)
	}
	if strings.Contains(err.Error(), collectors.ErrInvalidOptions.Error()) || !strings.Contains(err.Error(), "unterminated [") {
		t.Errorf("ParseNamespace error %q, want the problem without %q", err, collectors.ErrInvalidOptions)
	}
	cfg := Defaults()
	cfg.Namespaces = []Namespace{{Name: "a", Pattern: ""}}
	err = cfg.Validate()
	if err == nil || err.Error() != `namespace "a": pattern "": empty pattern` {
		t.Errorf("Validate: %v, want exactly the collectors' problem", err)
	}
}
