package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

// Passwords have no flag (a flag would show in process listings), only these variables.
const (
	envRedisPassword    = cli.EnvPrefix + "REDIS_PASSWORD"
	envSentinelPassword = cli.EnvPrefix + "REDIS_SENTINEL_PASSWORD"
)

// settings collects what flags, environment and the config file say, in that precedence.
type settings struct {
	cfg        exporterconfig.Config
	configFile string
	namespaces []string
	// flagNamespaces are the names of the namespaces --namespace NAME=PATTERN defined.
	flagNamespaces []string
	// selectors are --namespace values without '=' where the command allows them (inspect):
	// they name a configured namespace instead of defining one.
	selectors []string
	// types are the --type values: the Redis types the flags' namespaces count, as a file
	// namespace's types: field.
	types []string
}

// defineFunc adds a subcommand's flags to fs, bound to st.
type defineFunc func(fs *pflag.FlagSet, st *settings)

// defineConfigFlags adds the flags every subcommand shares: the config file, namespaces, Redis
// connection and scan limits. Defaults shown are st's current values.
func defineConfigFlags(fs *pflag.FlagSet, st *settings) {
	c := &st.cfg
	fs.StringVar(&st.configFile, "config.file", "", "YAML configuration file (redis, scan, namespaces); flags and environment override it")
	fs.StringArrayVar(&st.namespaces, "namespace", nil, "lock namespace as NAME=PATTERN (SCAN MATCH glob); repeatable, added to the file's namespaces. "+
		cli.EnvName("namespace")+" is split at every comma: give a pattern containing one by flag or in the file")
	cli.StringListVar(fs, &st.types, "type", nil, "Redis type the --namespace NAME=PATTERN namespaces count as locks: string (default) or hash (Redisson); repeatable or comma-separated, as a file namespace's types:")

	fs.StringVar(&c.Redis.Addr, "redis.addr", c.Redis.Addr, "Redis address: host:port, redis://[user@]host:port[/db] or rediss://… for TLS")
	cli.StringListVar(fs, &c.Redis.ClusterAddrs, "redis.cluster-addr", c.Redis.ClusterAddrs, "Redis Cluster seed node (host:port or URL); repeatable or comma-separated; selects Cluster mode")
	cli.StringListVar(fs, &c.Redis.SentinelAddrs, "redis.sentinel-addr", c.Redis.SentinelAddrs, "Redis Sentinel address; repeatable or comma-separated; selects Sentinel mode")
	fs.StringVar(&c.Redis.SentinelMaster, "redis.sentinel-master", c.Redis.SentinelMaster, "name of the master the Sentinels monitor")
	fs.StringVar(&c.Redis.Username, "redis.username", c.Redis.Username, "Redis ACL user (see docs/exporter.md for the least-privilege ACL)")
	fs.StringVar(&c.Redis.PasswordFile, "redis.password-file", c.Redis.PasswordFile, "file holding the Redis password, re-read on every new connection (else "+envRedisPassword+")")
	fs.StringVar(&c.Redis.SentinelPasswordFile, "redis.sentinel-password-file", c.Redis.SentinelPasswordFile, "file holding the Sentinel password (else "+envSentinelPassword+")")
	fs.StringVar(&c.Redis.TLS.CAFile, "redis.tls-ca-file", c.Redis.TLS.CAFile, "PEM CA bundle that signs the Redis server certificate (rediss:// only)")
	fs.StringVar(&c.Redis.TLS.CertFile, "redis.tls-cert-file", c.Redis.TLS.CertFile, "PEM client certificate for TLS client authentication")
	fs.StringVar(&c.Redis.TLS.KeyFile, "redis.tls-key-file", c.Redis.TLS.KeyFile, "PEM key of --redis.tls-cert-file")
	fs.StringVar(&c.Redis.TLS.ServerName, "redis.tls-server-name", c.Redis.TLS.ServerName, "server name to verify instead of the address' host")
	cli.BoolVar(fs, &c.Redis.TLS.InsecureSkipVerify, "redis.tls-insecure-skip-verify", c.Redis.TLS.InsecureSkipVerify, "do not verify the Redis server certificate (testing only)")

	cli.IntVar(fs, &c.Scan.BatchSize, "scan.batch-size", c.Scan.BatchSize, fmt.Sprintf("SCAN COUNT hint and keys per PTTL/OBJECT IDLETIME pipeline (1 to %d)", collectors.MaxBatchSize))
	cli.IntVar(fs, &c.Scan.MaxKeys, "scan.max-keys", c.Scan.MaxKeys, "keys examined per namespace and scrape at most; beyond it lock_exporter_keys_truncated is 1")
	fs.Var(&c.Scan.Timeout, "scan.timeout", "longest a scan may run; the Prometheus scrape timeout minus --scan.timeout-offset wins when shorter")
}

// parseSettings parses args over the config file, with LOCK_EXPORTER_* fallbacks for flags not
// given, and validates the result. Flags are parsed twice: once to find --config.file, then over
// the file's values, so the precedence is flag, then environment, then file, then default.
func parseSettings(e *env, name string, args []string, define defineFunc, selectable bool) (*settings, *pflag.FlagSet, error) {
	st := &settings{cfg: exporterconfig.Defaults()}
	fs := newFlagSet(name, st, define)
	if err := cli.ParseWithEnv(fs, args, e.Getenv); err != nil {
		return nil, fs, err
	}
	if st.configFile != "" {
		cfg, err := exporterconfig.Load(st.configFile)
		if err != nil {
			return nil, fs, err
		}
		st = &settings{cfg: cfg}
		fs = newFlagSet(name, st, define)
		if err := cli.ParseWithEnv(fs, args, e.Getenv); err != nil {
			return nil, fs, err
		}
	}
	for _, s := range st.namespaces {
		if selectable && !strings.Contains(s, "=") {
			st.selectors = append(st.selectors, s)
			continue
		}
		// A namespace from the environment is named by its variable in errors.
		ns, err := exporterconfig.ParseNamespaceFrom(cli.Named(fs, "namespace", s), s)
		if err != nil {
			return nil, fs, err
		}
		ns.Types = st.types
		st.cfg.Namespaces = append(st.cfg.Namespaces, ns)
		st.flagNamespaces = append(st.flagNamespaces, ns.Name)
	}
	if len(st.types) > 0 && len(st.flagNamespaces) == 0 {
		return nil, fs, fmt.Errorf("--type %s: it applies to namespaces defined with --namespace NAME=PATTERN, and none is (a file namespace takes types: instead)", strings.Join(st.types, ","))
	}
	st.cfg.Redis.Password = e.Getenv(envRedisPassword)
	st.cfg.Redis.SentinelPassword = e.Getenv(envSentinelPassword)
	if err := st.cfg.Validate(); err != nil {
		return nil, fs, err
	}
	return st, fs, nil
}

func newFlagSet(name string, st *settings, define defineFunc) *pflag.FlagSet {
	fs := cli.NewFlagSet(name)
	define(fs, st)
	return fs
}

// handleParseError turns a parse result into an exit status: help goes to stdout with status 0,
// anything else is one line on stderr with status 2.
func handleParseError(e *env, cmd, synopsis string, fs *pflag.FlagSet, err error) int {
	if cli.IsHelp(err) {
		cli.PrintUsage(e.Stdout, synopsis, fs)
		return exitOK
	}
	return usageError(e, cmd, err)
}
