package packconfig

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// Namespaces are the lock namespaces, each exactly an entry of the exporter configuration's
// namespaces: list. They are read and checked by the exporter's own loader
// (exporterconfig.DecodeNamespaces), so a mistake gets the message --config.file would give,
// with this file's line.
type Namespaces []exporterconfig.Namespace

// UnmarshalYAML reads the list with the exporter's loader.
func (ns *Namespaces) UnmarshalYAML(n *yaml.Node) error {
	list, err := exporterconfig.DecodeNamespaces(n)
	if err != nil {
		return err
	}
	*ns = list
	return nil
}

// Redis modes: one server, a Redis Cluster, or a master found through Sentinel.
const (
	ModeSingle   = "single"
	ModeCluster  = "cluster"
	ModeSentinel = "sentinel"
)

// Where the generated Kubernetes manifests and chart values mount what Redis settings refer to.
// The password directories are the chart's own (its existingSecret mount).
const (
	PasswordMountDir         = "/etc/lock-exporter/secrets/redis"
	SentinelPasswordMountDir = "/etc/lock-exporter/secrets/redis-sentinel"
	TLSMountDir              = "/etc/lock-exporter/tls"
	// secretFileName is the file a password Secret's key is mounted as.
	secretFileName = "password"
)

// Redis is how the exporter reaches the Redis that holds the locks. It holds no password:
// only where one is (a Kubernetes Secret or a file).
type Redis struct {
	// Mode is single (the default), cluster or sentinel.
	Mode string `yaml:"mode"`
	// Addrs are the server (single), the seed nodes (cluster) or the Sentinels (sentinel):
	// host:port, or redis:// and rediss:// URLs as the exporter takes them (rediss:// for TLS).
	Addrs []string `yaml:"addrs"`
	// SentinelMaster is the name of the master the Sentinels monitor.
	SentinelMaster string `yaml:"sentinel_master"`
	// Username is the ACL user.
	Username string `yaml:"username"`
	// TLS holds the TLS files, by their paths in the exporter's container.
	TLS TLS `yaml:"tls"`
	// Password is where the Redis password is.
	Password SecretRef `yaml:"password"`
	// SentinelPassword is where the Sentinels' own password is, when they have one.
	SentinelPassword SecretRef `yaml:"sentinel_password"`
}

// TLS is the exporter's TLS settings, and the Kubernetes Secret that holds the files.
type TLS struct {
	// Secret, when set, is mounted at TLSMountDir; the files are then paths in it.
	Secret             string `yaml:"secret"`
	exporterconfig.TLS `yaml:",inline"`
}

// SecretRef says where a password is: a key of a Kubernetes Secret, or a file.
type SecretRef struct {
	Secret KubernetesSecret `yaml:"secret"`
	// File is a path in the exporter's container (or on its machine) that holds the password.
	File string `yaml:"file"`
}

// KubernetesSecret names a key of a Secret in the exporter's Kubernetes namespace.
type KubernetesSecret struct {
	Name string `yaml:"name"`
	// Key defaults to "password".
	Key string `yaml:"key"`
}

// IsZero reports whether the reference names nothing.
func (s SecretRef) IsZero() bool { return s == SecretRef{} }

// SecretKey is the Secret's key, with its default.
func (k KubernetesSecret) SecretKey() string {
	if k.Key == "" {
		return secretFileName
	}
	return k.Key
}

// DescribesLocks reports whether the configuration describes the locks (namespaces and Redis),
// so that the pack writes the exporter's configuration, chart values and manifests for them.
func (c Config) DescribesLocks() bool { return len(c.Namespaces) > 0 }

// kubernetesName is a Secret's name (a DNS subdomain); secretKey a key of its data.
var (
	kubernetesName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	secretKey      = regexp.MustCompile(`^[-._a-zA-Z0-9]{1,253}$`)
)

// ErrLiteralPassword refuses a password written into the pack configuration.
var ErrLiteralPassword = errors.New("a password is never written in the pack configuration: " +
	"give secret: {name: …, key: …} (a Kubernetes Secret) or file: (a path where it is mounted)")

// validateLocks checks that namespaces and redis come together and that redis is a connection
// the exporter accepts.
func (c Config) validateLocks() error {
	switch {
	case len(c.Namespaces) == 0 && c.Redis.isSet():
		return errors.New("redis: describes the Redis of the locks, and namespaces is empty: list the lock namespaces")
	case len(c.Namespaces) == 0:
		return nil
	case len(c.Redis.Addrs) == 0:
		return errors.New("redis.addrs: give the address of the Redis that holds the locks (the Sentinels' in sentinel mode)")
	}
	return c.Redis.validate()
}

func (r Redis) isSet() bool {
	return r.Mode != "" || len(r.Addrs) > 0 || r.SentinelMaster != "" || r.Username != "" ||
		r.TLS != TLS{} || !r.Password.IsZero() || !r.SentinelPassword.IsZero()
}

func (r Redis) validate() error {
	switch r.Mode {
	case "", ModeSingle:
		if len(r.Addrs) > 1 {
			return fmt.Errorf("redis.addrs: mode single takes one address, got %d (mode cluster takes seed nodes, mode sentinel the Sentinels)", len(r.Addrs))
		}
	case ModeCluster, ModeSentinel:
	default:
		return fmt.Errorf("redis.mode: %q is not single, cluster or sentinel", r.Mode)
	}
	if (r.Mode == ModeSentinel) != (r.SentinelMaster != "") {
		return errors.New("redis.sentinel_master: give it with mode sentinel (the monitored master's name), and only then")
	}
	if !r.SentinelPassword.IsZero() && r.Mode != ModeSentinel {
		return errors.New("redis.sentinel_password: only for mode sentinel")
	}
	for _, ref := range []struct {
		path string
		ref  SecretRef
	}{{"redis.password", r.Password}, {"redis.sentinel_password", r.SentinelPassword}} {
		if err := ref.ref.validate(); err != nil {
			return fmt.Errorf("%s%w", ref.path, err)
		}
	}
	if err := r.TLS.validate(); err != nil {
		return fmt.Errorf("redis.tls.%w", err)
	}
	if err := r.Exporter().CheckAddresses(); err != nil {
		return fmt.Errorf("redis.addrs: %w", err)
	}
	return nil
}

// validate returns an error that starts with the rest of the setting's path.
func (s SecretRef) validate() error {
	switch {
	case s.File != "" && s.Secret != KubernetesSecret{}:
		return errors.New(": give secret or file, not both")
	case s.Secret.Name == "" && s.Secret.Key != "":
		return errors.New(".secret.name: the Secret's name is missing")
	case s.Secret.Name != "" && !kubernetesName.MatchString(s.Secret.Name):
		return fmt.Errorf(".secret.name: %q is not a Kubernetes object name", s.Secret.Name)
	case s.Secret.Key != "" && !secretKey.MatchString(s.Secret.Key):
		return fmt.Errorf(".secret.key: %q is not a Secret key (letters, digits, '-', '_', '.')", s.Secret.Key)
	case s.File != "" && !path.IsAbs(s.File):
		// The error does not quote the path: a password pasted here would be printed.
		return errors.New(".file: want an absolute path (where the file is mounted)")
	}
	return nil
}

func (t TLS) validate() error {
	if t.Secret == "" {
		return nil
	}
	if !kubernetesName.MatchString(t.Secret) {
		return fmt.Errorf("secret: %q is not a Kubernetes object name", t.Secret)
	}
	for _, f := range []struct{ key, path string }{
		{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile},
	} {
		if f.path != "" && !strings.HasPrefix(f.path, TLSMountDir+"/") {
			return fmt.Errorf("%s: %q is not in %s, where tls.secret is mounted", f.key, f.path, TLSMountDir)
		}
	}
	return nil
}

// Exporter is the redis: section of the exporter configuration the pack writes: the addresses
// under the key of the mode, and each password as the file the manifests mount it as.
func (r Redis) Exporter() exporterconfig.Redis {
	out := exporterconfig.Redis{
		SentinelMaster:       r.SentinelMaster,
		Username:             r.Username,
		TLS:                  r.TLS.TLS,
		PasswordFile:         r.Password.mountedFile(PasswordMountDir),
		SentinelPasswordFile: r.SentinelPassword.mountedFile(SentinelPasswordMountDir),
	}
	switch r.Mode {
	case ModeCluster:
		out.ClusterAddrs = r.Addrs
	case ModeSentinel:
		out.SentinelAddrs = r.Addrs
	default:
		if len(r.Addrs) > 0 {
			out.Addr = r.Addrs[0]
		}
	}
	return out
}

// mountedFile is the password file the exporter reads: the file given, or the Secret mounted
// in dir.
func (s SecretRef) mountedFile(dir string) string {
	if s.Secret.Name != "" {
		return dir + "/" + secretFileName
	}
	return s.File
}

// SecretMount is a Kubernetes Secret the exporter's pod mounts for the Redis settings: as a
// directory of its keys, or, with Key set, that key alone as the file "password".
type SecretMount struct {
	Volume string // the pod's volume name
	Secret string
	Key    string
	Dir    string
}

// SecretMounts are the Secrets the Redis settings refer to, where the exporter configuration
// the pack writes expects them.
func (r Redis) SecretMounts() []SecretMount {
	var mounts []SecretMount
	for _, ref := range []struct {
		volume, dir string
		secret      KubernetesSecret
	}{
		{"redis-password", PasswordMountDir, r.Password.Secret},
		{"redis-sentinel-password", SentinelPasswordMountDir, r.SentinelPassword.Secret},
	} {
		if ref.secret.Name != "" {
			mounts = append(mounts, SecretMount{Volume: ref.volume, Secret: ref.secret.Name, Key: ref.secret.SecretKey(), Dir: ref.dir})
		}
	}
	if r.TLS.Secret != "" {
		mounts = append(mounts, SecretMount{Volume: "redis-tls", Secret: r.TLS.Secret, Dir: TLSMountDir})
	}
	return mounts
}
