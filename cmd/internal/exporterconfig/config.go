// Package exporterconfig is lock-exporter's configuration: the YAML file schema, its strict
// loading, validation, and the Redis client and scanner options it describes. Command-line flags
// (in cmd/lock-exporter) write into the same Config, so a flag and its file field always share
// one validation.
package exporterconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/collectors"
)

// DefaultRedisAddr is the Redis address used when none is configured.
const DefaultRedisAddr = "localhost:6379"

// DefaultTimeoutOffset is subtracted from Prometheus' scrape timeout so that the answer, not
// just the scan, arrives in time.
const DefaultTimeoutOffset = 500 * time.Millisecond

// Config is the whole exporter configuration. The YAML file has the same shape:
//
//	redis:
//	  addr: localhost:6379            # host:port, redis://[user@]host:port[/db] or rediss://…
//	  cluster_addrs: []               # Redis Cluster seed nodes (Cluster mode when set)
//	  sentinel_addrs: []              # Sentinel nodes (Sentinel mode when set)
//	  sentinel_master: ""             # master name, required with sentinel_addrs
//	  username: ""
//	  password_file: ""               # else LOCK_EXPORTER_REDIS_PASSWORD
//	  sentinel_password_file: ""      # else LOCK_EXPORTER_REDIS_SENTINEL_PASSWORD
//	  tls:                            # used with rediss:// addresses
//	    ca_file: ""
//	    cert_file: ""
//	    key_file: ""
//	    server_name: ""
//	    insecure_skip_verify: false
//	scan:
//	  batch_size: 1000                # 1 to 10000
//	  max_keys: 100000
//	  top_k: 5                        # 1 to 100
//	  timeout: 10s
//	  timeout_offset: 500ms
//	  max_concurrent_targets: 4       # /scrape targets scanned at once
//	  mode: auto                      # auto (index where Redis can feed it) or walk
//	  index_key_budget: 500000        # keys the index holds at most, all namespaces together
//	  backstop_keys_per_second: 2000  # pace of the index's backstop walk; 0: none
//	  takeover_window: 5m             # an acquisition this soon after an expired end is a takeover
//	namespaces:
//	  - name: scheduler
//	    pattern: "cordum:scheduler:job:*"
//	    expected_ttl: 60s
//	    expected_renew_interval: 20s
//	    expected_max_hold: 30m        # LockHeldTooLong; reads holder records (a GET per key)
//	    types: [string]               # string (default) and/or hash (Redisson)
//	    takeover_window: 2m           # else scan.takeover_window
//	    ends_by_expiry: false         # true: holds end by expiry on purpose (no lapses, no takeovers)
//	targets:                          # served on /scrape?target=NAME; see Target
//	  - name: payments
//	    addr: redis-payments.internal:6379
//	    password_file: /etc/lock-exporter/payments.password
type Config struct {
	Redis      Redis       `yaml:"redis"`
	Scan       Scan        `yaml:"scan"`
	Namespaces []Namespace `yaml:"namespaces"`
	// Targets are the Redis deployments served on /scrape?target=NAME (see targets.go).
	Targets []Target `yaml:"targets"`
}

// Redis says how to reach the lock store.
type Redis struct {
	Addr                 string   `yaml:"addr"`
	ClusterAddrs         []string `yaml:"cluster_addrs"`
	SentinelAddrs        []string `yaml:"sentinel_addrs"`
	SentinelMaster       string   `yaml:"sentinel_master"`
	Username             string   `yaml:"username"`
	PasswordFile         string   `yaml:"password_file"`
	SentinelPasswordFile string   `yaml:"sentinel_password_file"`
	TLS                  TLS      `yaml:"tls"`

	// Password and SentinelPassword come from the environment only, never from a file or a
	// flag that would show in process listings.
	Password         string `yaml:"-"`
	SentinelPassword string `yaml:"-"`
}

// TLS holds the files for rediss:// connections.
type TLS struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Scan tunes how hard one scrape may work.
type Scan struct {
	BatchSize     int      `yaml:"batch_size"`
	MaxKeys       int      `yaml:"max_keys"`
	TopK          int      `yaml:"top_k"`
	Timeout       Duration `yaml:"timeout"`
	TimeoutOffset Duration `yaml:"timeout_offset"`
	// MaxConcurrentTargets bounds the target scans running at once on /scrape; zero means
	// DefaultMaxConcurrentTargets.
	MaxConcurrentTargets int `yaml:"max_concurrent_targets"`
	// Mode is "auto" (the lock-key index, fed by client tracking, where the server and pattern
	// allow; the walk elsewhere) or "walk" (a keyspace walk on every scrape).
	Mode string `yaml:"mode"`
	// IndexKeyBudget is the most keys the index may hold, all namespaces together.
	IndexKeyBudget int `yaml:"index_key_budget"`
	// BackstopKeysPerSecond paces the index's backstop walk; 0 turns it off.
	BackstopKeysPerSecond int `yaml:"backstop_keys_per_second"`
	// TakeoverWindow: an acquisition of a key this soon after its hold ended expired or
	// overwritten is a takeover (lock_key_takeovers_total), where a namespace sets no window.
	TakeoverWindow Duration `yaml:"takeover_window"`
}

// Namespace is one lock namespace of the file.
type Namespace struct {
	Name                  string   `yaml:"name"`
	Pattern               string   `yaml:"pattern"`
	ExpectedTTL           Duration `yaml:"expected_ttl"`
	ExpectedRenewInterval Duration `yaml:"expected_renew_interval"`
	// ExpectedMaxHold is the longest a lock of the namespace should be held
	// (lock_expected_max_hold_seconds, LockHeldTooLong); declaring it makes the scan read each
	// key's holder record for its hold age.
	ExpectedMaxHold Duration `yaml:"expected_max_hold"`
	// Types are the Redis value types that count as locks: "string" (the default) and/or
	// "hash" (Redisson keeps its locks in hashes).
	Types []string `yaml:"types"`
	// TakeoverWindow is the namespace's takeover window; zero: scan.takeover_window.
	TakeoverWindow Duration `yaml:"takeover_window"`
	// EndsByExpiry declares that the namespace's holds end by expiry on purpose (lease's
	// HoldUntilExpiry, a reconciler whose expiry rotates ownership, ShedLock's
	// lockAtLeastFor): expired ends are counted but are no lapses, and no takeover follows one.
	EndsByExpiry bool `yaml:"ends_by_expiry"`
}

// Defaults returns the configuration used where neither file nor flag says otherwise.
func Defaults() Config {
	return Config{
		Redis: Redis{Addr: DefaultRedisAddr},
		Scan: Scan{
			BatchSize:             collectors.DefaultBatchSize,
			MaxKeys:               collectors.DefaultMaxKeys,
			TopK:                  collectors.DefaultTopK,
			Timeout:               Duration(collectors.DefaultTimeout),
			TimeoutOffset:         Duration(DefaultTimeoutOffset),
			Mode:                  string(collectors.ModeAuto),
			IndexKeyBudget:        collectors.DefaultIndexKeyBudget,
			BackstopKeysPerSecond: collectors.DefaultBackstopKeysPerSecond,
			TakeoverWindow:        Duration(collectors.DefaultTakeoverWindow),
		},
	}
}

// Load reads a YAML file over Defaults. Unknown fields are errors, so a typo cannot silently
// fall back to a default.
func Load(path string) (Config, error) {
	cfg := Defaults()
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, invalidf("config file %s: %v", path, errors.Unwrap(err))
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	// Config.UnmarshalYAML refuses unknown keys, keys given twice and badly typed values in its
	// own words; what reaches here otherwise is YAML that does not parse. yaml.v3 lists some
	// errors on lines of their own: they are joined, as every error here is one line.
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, invalidf("config file %s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	// A second document (after ---) would otherwise be dropped without a word: refuse it, so
	// namespaces pasted below a separator are never silently unmonitored.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return cfg, invalidf("config file %s: more than one YAML document (remove the --- separator)", path)
	}
	return cfg, nil
}

// ScannerOptions converts the configuration for collectors.NewScanner.
func (c Config) ScannerOptions() collectors.Options {
	opts := collectors.Options{
		BatchSize: c.Scan.BatchSize,
		MaxKeys:   c.Scan.MaxKeys,
		TopK:      c.Scan.TopK,
		Timeout:   time.Duration(c.Scan.Timeout),
		// Validated by Scan.validate; inspect sets ModeWalk for its one-shot walk.
		Mode:           collectors.ScanMode(c.Scan.Mode),
		IndexKeyBudget: c.Scan.IndexKeyBudget,
		TakeoverWindow: time.Duration(c.Scan.TakeoverWindow),
	}
	opts.BackstopKeysPerSecond = c.Scan.BackstopKeysPerSecond
	if opts.BackstopKeysPerSecond == 0 {
		opts.BackstopKeysPerSecond = -1 // the scanner's "off"; its zero means the default
	}
	for _, ns := range c.Namespaces {
		opts.Namespaces = append(opts.Namespaces, ns.collector())
	}
	return opts
}

func (n Namespace) collector() collectors.Namespace {
	return collectors.Namespace{
		Name:                  n.Name,
		Pattern:               n.Pattern,
		ExpectedTTL:           time.Duration(n.ExpectedTTL),
		ExpectedRenewInterval: time.Duration(n.ExpectedRenewInterval),
		ExpectedMaxHold:       time.Duration(n.ExpectedMaxHold),
		Types:                 n.Types,
		TakeoverWindow:        time.Duration(n.TakeoverWindow),
		EndsByExpiry:          n.EndsByExpiry,
	}
}

// ParseNamespace parses the NAME=PATTERN form of --namespace. The name ends at the first '=';
// the pattern may contain more.
func ParseNamespace(s string) (Namespace, error) {
	return ParseNamespaceFrom(fmt.Sprintf("--namespace %q", s), s)
}

// ParseNamespaceFrom is ParseNamespace whose errors start with where instead of the flag: a
// value from the environment is named by its variable (`LOCK_EXPORTER_NAMESPACE="jobs"`).
func ParseNamespaceFrom(where, s string) (Namespace, error) {
	name, pattern, ok := strings.Cut(s, "=")
	if !ok {
		return Namespace{}, invalidf("%s: want NAME=PATTERN", where)
	}
	ns := Namespace{Name: name, Pattern: pattern}
	if err := ns.collector().Validate(); err != nil {
		return Namespace{}, invalidf("%s: %v", where, namespaceProblem(err))
	}
	return ns, nil
}
