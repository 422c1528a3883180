package exporterconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestLoadTargets(t *testing.T) {
	pw := testkit.WriteFile(t, "payments.pw", "s3cret\n")
	path := testkit.WriteFile(t, "config.yml", `
scan:
  max_concurrent_targets: 2
namespaces:
  - {name: jobs, pattern: "jobs:*"}
targets:
  - name: payments
    addr: redis-payments.internal:6379
    username: lock-exporter
    password_file: `+pw+`
  - name: orders.eu-1:6379
    cluster_addrs: [orders-0:6379, orders-1:6379]
`)
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if cfg.MaxConcurrentTargetScans() != 2 {
		t.Errorf("MaxConcurrentTargetScans = %d, want 2", cfg.MaxConcurrentTargetScans())
	}
	payments, err := cfg.TargetNamed("payments")
	if err != nil || payments.Addr != "redis-payments.internal:6379" || payments.Username != "lock-exporter" || payments.PasswordFile != pw {
		t.Errorf("TargetNamed(payments) = %+v, %v", payments, err)
	}
	orders, err := cfg.TargetNamed("orders.eu-1:6379")
	if err != nil || len(orders.ClusterAddrs) != 2 {
		t.Errorf("TargetNamed(orders) = %+v, %v", orders, err)
	}
	if res, err := orders.resolve(); err != nil || res.mode != cluster {
		t.Errorf("orders resolves to %+v, %v; want cluster mode", res, err)
	}
	// Only names resolve: an address, even a configured one, or a prefix is unknown.
	for _, name := range []string{"redis-payments.internal:6379", "pay", "", "PAYMENTS"} {
		if _, err := cfg.TargetNamed(name); !errors.Is(err, ErrUnknownTarget) {
			t.Errorf("TargetNamed(%q) = %v, want ErrUnknownTarget", name, err)
		}
	}
	if !cfg.Redis.IsDefault() {
		t.Errorf("a file without a redis section: IsDefault false")
	}
	if !cfg.TargetsWithDefaultRedis() {
		t.Errorf("targets and no redis section: TargetsWithDefaultRedis false")
	}
}

// TargetsWithDefaultRedis reads the configuration alone: it needs targets, and a redis section
// that names nothing but the default address.
func TestTargetsWithDefaultRedis(t *testing.T) {
	target := []Target{{Name: "payments", Redis: Redis{Addr: "payments:6379"}}}
	def := Defaults().Redis
	other := def
	other.Addr = "redis.internal:6379"
	for _, tt := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"targets, default redis section", Config{Redis: def, Targets: target}, true},
		{"targets and a redis address", Config{Redis: other, Targets: target}, false},
		{"no targets", Config{Redis: def}, false},
	} {
		if got := tt.cfg.TargetsWithDefaultRedis(); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTargetDefaultsAndIsolation(t *testing.T) {
	cfg := Defaults()
	if cfg.MaxConcurrentTargetScans() != DefaultMaxConcurrentTargets {
		t.Errorf("default MaxConcurrentTargetScans = %d", cfg.MaxConcurrentTargetScans())
	}
	// The environment's password is the redis section's, never a target's.
	cfg.Redis.Password = "env-password"
	cfg.Namespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	sub := cfg.ForTarget(Target{Name: "a", Redis: Redis{Addr: "a:6379"}})
	if sub.Redis.Password != "" || len(sub.Targets) != 0 || len(sub.Namespaces) != 1 || sub.Scan != cfg.Scan {
		t.Errorf("ForTarget = %+v", sub)
	}
	if cfg.Redis.IsDefault() {
		t.Errorf("IsDefault with a password from the environment")
	}
	for _, r := range []Redis{{Addr: "other:6379"}, {Addr: DefaultRedisAddr, Username: "u"}, {Addr: DefaultRedisAddr, ClusterAddrs: []string{"x:1"}}} {
		if r.IsDefault() {
			t.Errorf("IsDefault(%+v) = true", r)
		}
	}
}

// TestInvalidTargets: every bad target is one line naming the target (by name, or by index when
// the name itself is bad) and never quoting a password or a refused name.
func TestInvalidTargets(t *testing.T) {
	const secret = "pw-9a7b-secret"
	tests := []struct {
		name    string
		targets string
		want    string
	}{
		{"duplicate", "[{name: a, addr: 'a:1'}, {name: a, addr: 'b:1'}]", `duplicate target name "a"`},
		{"empty name", "[{addr: 'a:1'}]", "targets[0]: name is empty"},
		{"name with a URL password", "[{name: 'redis://u:" + secret + "@h:1', addr: 'a:1'}]", "targets[0]: name: want letters"},
		{"name with a space", "[{name: 'a b', addr: 'a:1'}]", "targets[0]: name: want"},
		{"long name", "[{name: " + strings.Repeat("x", 129) + ", addr: 'a:1'}]", "longer than 128 bytes"},
		{"inline password", "[{name: a, addr: 'a:1', password: " + secret + "}]", `target "a": password is not read from the configuration file`},
		{"no address", "[{name: a}]", `target "a": no address`},
		{"URL password", "[{name: a, addr: 'redis://u:" + secret + "@h:1'}]", `target "a": redis.addr "redis://u:xxxxx@h:1": has a password`},
		{"missing password file", "[{name: a, addr: 'a:1', password_file: /nonexistent/pw}]", `target "a": redis.password-file: the file given in password_file: no such file`},
		{"sentinel without master", "[{name: a, sentinel_addrs: ['s:1']}]", `target "a": redis.sentinel-addr needs redis.sentinel-master`},
		{"TLS without rediss", "[{name: a, addr: 'a:1', tls: {server_name: x}}]", `target "a": redis TLS settings need rediss://`},
		{"unknown field", "[{name: a, addr: 'a:1', pasword_file: x}]", `unknown field "pasword_file"`},
		{"duplicate namespace of a target", "[{name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'x:*'}, {name: x, pattern: 'y:*'}]}]", `target "a": duplicate namespace name "x"`},
		{"bad pattern of a target", "[{name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'x:[a'}]}]", `target "a": namespace "x": pattern "x:[a": unterminated [`},
		{"unknown field of a target's namespace", "[{name: a, addr: 'a:1', namespaces: [{name: x, patern: 'x:*'}]}]", `unknown field "patern"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := testkit.WriteFile(t, "c.yml", "namespaces: [{name: jobs, pattern: 'jobs:*'}]\ntargets: "+tt.targets+"\n")
			cfg, err := Load(path)
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				t.Fatalf("accepted, want an error containing %q", tt.want)
			}
			msg := err.Error()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one ErrInvalid line containing %q", msg, tt.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error quotes the password: %q", msg)
			}
		})
	}
	t.Run("negative concurrency", func(t *testing.T) {
		cfg := Defaults()
		cfg.Namespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
		cfg.Scan.MaxConcurrentTargets = -1
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "scan.max-concurrent-targets") {
			t.Errorf("Validate = %v, want a scan.max-concurrent-targets error", err)
		}
	})
}

// TestTargetNamespaces: a target that lists namespaces is scanned for those instead of the
// file's, and an exporter of targets alone needs no namespaces of the file's when each target has
// its own, but refuses a target left with none.
func TestTargetNamespaces(t *testing.T) {
	own := []Namespace{{Name: "fulfilment", Pattern: "orders:lock:*"}}
	cfg := Defaults()
	cfg.Namespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
	cfg.Targets = []Target{
		{Name: "payments", Redis: Redis{Addr: "payments:6379"}},
		{Name: "orders", Redis: Redis{Addr: "orders:6379"}, Namespaces: own},
	}
	for _, tc := range []struct {
		target string
		want   string
	}{{"payments", "jobs"}, {"orders", "fulfilment"}} {
		tg, _ := cfg.TargetNamed(tc.target)
		if got := cfg.ForTarget(tg).Namespaces; len(got) != 1 || got[0].Name != tc.want {
			t.Errorf("ForTarget(%s).Namespaces = %+v, want %s alone", tc.target, got, tc.want)
		}
	}

	tests := []struct {
		name string
		file string
		want string // "" when valid
	}{
		{
			name: "targets alone, each with its own",
			file: "targets:\n  - {name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'x:*'}]}\n  - {name: b, addr: 'b:1', namespaces: [{name: y, pattern: 'y:*'}]}\n",
		},
		{
			name: "targets alone, one without",
			file: "targets:\n  - {name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'x:*'}]}\n  - {name: b, addr: 'b:1'}\n",
			want: `target "b": no namespace configured: list namespaces under the target, or give namespaces in --config.file`,
		},
		{
			name: "a redis section of its own needs the file's namespaces",
			file: "redis: {addr: 'r:1'}\ntargets:\n  - {name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'x:*'}]}\n",
			want: "no namespace configured: give --namespace NAME=PATTERN or namespaces in --config.file",
		},
		{
			name: "a target's namespace may share a name with the file's",
			file: "namespaces: [{name: x, pattern: 'x:*'}]\ntargets:\n  - {name: a, addr: 'a:1', namespaces: [{name: x, pattern: 'other:*'}]}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(testkit.WriteFile(t, "c.yml", tt.file))
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want valid", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestDocumentedTargetsLoad loads the configuration-file example of docs/exporter.md, whose
// targets show the inline redis fields (tls included), with the strict loader.
func TestDocumentedTargetsLoad(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "docs", "exporter.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		code, _, _ := strings.Cut(part, "```")
		if strings.Contains(code, "\ntargets:") && strings.Contains(code, "\nnamespaces:") {
			example = code
		}
	}
	if example == "" {
		t.Fatal("docs/exporter.md: no configuration-file example with targets")
	}
	cfg, err := Load(testkit.WriteFile(t, "documented.yml", example))
	if err != nil {
		t.Fatal(err)
	}
	orders, err := cfg.TargetNamed("orders")
	if err != nil || len(cfg.Targets) != 2 || orders.TLS.CAFile == "" || len(orders.ClusterAddrs) != 2 || len(orders.Namespaces) != 1 {
		t.Errorf("documented targets = %+v, %v", cfg.Targets, err)
	}
	if cfg.Scan.MaxConcurrentTargets != DefaultMaxConcurrentTargets {
		t.Errorf("documented max_concurrent_targets %d, default %d", cfg.Scan.MaxConcurrentTargets, DefaultMaxConcurrentTargets)
	}
}
