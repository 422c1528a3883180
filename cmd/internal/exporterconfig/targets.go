package exporterconfig

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/redis/go-redis/v9"
)

// DefaultMaxConcurrentTargets bounds the target scans running at once when
// scan.max_concurrent_targets is not set. Each scan holds up to collectors.ConnectionsPerNode
// connections per node and a core while it sorts keys; four keeps a small exporter responsive
// while scrapes of other targets queue for a moment (a scan is milliseconds to seconds).
const DefaultMaxConcurrentTargets = 4

// maxTargetNameLen bounds a target name, which becomes a URL parameter and usually the instance
// label.
const maxTargetNameLen = 128

// targetName is what a target name may contain: enough for "payments", "eu-1/orders" or a
// host:port, nothing that needs escaping in a URL query, a label value or a log line.
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]*$`)

// Target is one Redis deployment served on /scrape?target=NAME: a name and the same connection
// settings as the redis section, inline. The scan settings are the file's; so are the
// namespaces, unless the target lists its own, for a deployment whose locks are named apart.
//
//	targets:
//	  - name: payments
//	    addr: redis-payments.internal:6379
//	    username: lock-exporter
//	    password_file: /etc/lock-exporter/payments.password
//	  - name: orders
//	    cluster_addrs: [redis-orders-0:6379, redis-orders-1:6379]
//	    namespaces:                   # instead of the file's
//	      - {name: fulfilment, pattern: "orders:lock:*"}
type Target struct {
	Name  string `yaml:"name"`
	Redis `yaml:",inline"`
	// Namespaces, when given, are scanned on this target instead of the file's namespaces
	// (and the --namespace flags, which add to the file's).
	Namespaces []Namespace `yaml:"namespaces"`
	// InlinePassword is only here to refuse it with a clear message: a password belongs in
	// password_file, not in a configuration file that is often a ConfigMap or in a repository.
	InlinePassword string `yaml:"password"`
}

// ErrUnknownTarget is returned by TargetNamed for a name no target has.
var ErrUnknownTarget = errors.New("unknown target")

// TargetNamed returns the configured target called name. Only configured names resolve, so a
// scrape request can never make the exporter connect to an address of its choosing.
func (c Config) TargetNamed(name string) (Target, error) {
	for _, t := range c.Targets {
		if t.Name == name {
			return t, nil
		}
	}
	return Target{}, ErrUnknownTarget
}

// MaxConcurrentTargetScans is scan.max_concurrent_targets with its default applied.
func (c Config) MaxConcurrentTargetScans() int {
	if c.Scan.MaxConcurrentTargets == 0 {
		return DefaultMaxConcurrentTargets
	}
	return c.Scan.MaxConcurrentTargets
}

// ForTarget is the configuration for scanning target t: its connection settings with the file's
// scan settings, and its own namespaces or else the file's. The environment's passwords
// (LOCK_EXPORTER_REDIS_PASSWORD) belong to the redis section only, never to a target.
func (c Config) ForTarget(t Target) Config {
	r := t.Redis
	r.Password, r.SentinelPassword = "", ""
	namespaces := c.Namespaces
	if len(t.Namespaces) > 0 {
		namespaces = t.Namespaces
	}
	return Config{Redis: r, Scan: c.Scan, Namespaces: namespaces}
}

// TargetsWithDefaultRedis reports what the configuration alone says about the redis section's
// Redis: targets are configured and the redis section says nothing but the built-in default
// address. The command decides from this and its --redis.* flags whether /metrics scans a Redis
// of its own (exporter.Scope.TargetsOnly is that decision, file and flags together).
func (c Config) TargetsWithDefaultRedis() bool {
	return len(c.Targets) > 0 && c.Redis.IsDefault()
}

// NewTargetClient builds the client for target t, its own connection pool sized like the
// redis section's (see NewClient).
func (c Config) NewTargetClient(t Target) (redis.UniversalClient, error) {
	return c.ForTarget(t).NewClient()
}

// IsDefault reports whether the redis section says nothing but the built-in default
// address: with targets configured, /metrics then scans no Redis of its own.
func (r Redis) IsDefault() bool {
	return r.Addr == DefaultRedisAddr && len(r.ClusterAddrs) == 0 && len(r.SentinelAddrs) == 0 &&
		r.SentinelMaster == "" && r.Username == "" && r.PasswordFile == "" &&
		r.SentinelPasswordFile == "" && r.TLS == (TLS{}) && r.Password == "" && r.SentinelPassword == ""
}

// validateTargets checks every target's name and connection settings, with the same rules as the
// redis section; every message names the target.
func (c Config) validateTargets() error {
	if c.Scan.MaxConcurrentTargets < 0 {
		return invalidf("scan.max-concurrent-targets must be at least 1, got %d", c.Scan.MaxConcurrentTargets)
	}
	seen := make(map[string]bool, len(c.Targets))
	for i, t := range c.Targets {
		if err := validateTargetName(t.Name); err != nil {
			return invalidf("targets[%d]: %v", i, err)
		}
		if seen[t.Name] {
			return invalidf("duplicate target name %q", t.Name)
		}
		seen[t.Name] = true
		if t.InlinePassword != "" {
			return invalidf("target %q: password is not read from the configuration file: put it in a file named by password_file", t.Name)
		}
		if t.Addr == "" && len(t.ClusterAddrs) == 0 && len(t.SentinelAddrs) == 0 {
			return invalidf("target %q: no address: give addr, cluster_addrs or sentinel_addrs", t.Name)
		}
		sub := c.ForTarget(t)
		if len(sub.Namespaces) == 0 {
			return invalidf("target %q: no namespace configured: list namespaces under the target, or give namespaces in --config.file", t.Name)
		}
		if err := sub.Validate(); err != nil {
			return invalidf("target %q: %w", t.Name, err)
		}
	}
	return nil
}

func validateTargetName(name string) error {
	switch {
	case name == "":
		return errors.New("name is empty")
	case len(name) > maxTargetNameLen:
		return fmt.Errorf("name is longer than %d bytes", maxTargetNameLen)
	case !targetName.MatchString(name):
		// The name is not quoted: a refused name may be a URL with a password pasted by mistake.
		return errors.New("name: want letters, digits and _ . : / - (starting with a letter or digit)")
	}
	return nil
}
