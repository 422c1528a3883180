package exporterconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors"
)

// dialTimeout bounds connection set-up; a scrape's deadline usually cuts it shorter.
const dialTimeout = 5 * time.Second

// poolTimeoutMargin puts the pool timeout past the longest scan; see Config.clientOptions.
const poolTimeoutMargin = time.Second

// NewClient builds the go-redis client the configuration describes: a ClusterClient for
// cluster_addrs, a Sentinel failover client for sentinel_addrs, a plain client otherwise. Its
// connection pool is sized for scanning the configured namespaces.
//
// Socket reads follow the scrape deadline (ContextTimeoutEnabled), and a failed command is not
// retried: the next scrape is the retry, and a dead Redis must show as lock_exporter_up 0 at
// once. The password file is read again for every new connection, so a rotated password needs
// no restart. CLIENT SETINFO is not sent, so the least-privilege ACL does not need it.
func (c Config) NewClient() (redis.UniversalClient, error) {
	opts, err := c.clientOptions()
	if err != nil {
		return nil, err
	}
	return redis.NewUniversalClient(opts), nil
}

// clientOptions adds the pool settings to the Redis section's options. go-redis' defaults do not
// fit a scan: a wait for a connection fails after PoolTimeout (ReadTimeout + 1s) as "connection
// pool timeout", which the scan would report as Redis down although Redis is fine. So the pool is
// as large as scans can use (collectors.ConnectionsPerNode), and PoolTimeout is
// longer than any scan may run: a wait is then ended by the scan's context deadline (go-redis
// pool waits watch the context), which the scanner treats as the deadline cutting the scan
// short, never by the pool's own timer. The pool dials on demand, so connections beyond what a
// scan uses are never opened.
func (c Config) clientOptions() (*redis.UniversalOptions, error) {
	opts, err := c.Redis.clientOptions()
	if err != nil {
		return nil, err
	}
	opts.PoolSize = collectors.ConnectionsPerNode()
	timeout := time.Duration(c.Scan.Timeout)
	if timeout <= 0 {
		timeout = collectors.DefaultTimeout // what the scanner uses for a zero Timeout
	}
	opts.PoolTimeout = timeout + poolTimeoutMargin
	return opts, nil
}

func (r Redis) clientOptions() (*redis.UniversalOptions, error) {
	res, err := r.resolve()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := r.tlsConfig()
	if err != nil {
		return nil, err
	}
	opts := &redis.UniversalOptions{
		Addrs:                 res.addrs,
		DB:                    res.db,
		Username:              res.username,
		Password:              r.Password,
		TLSConfig:             tlsCfg,
		IsClusterMode:         res.mode == cluster,
		DialTimeout:           dialTimeout,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		DialerRetries:         1,
		DisableIdentity:       true,
	}
	if res.mode == sentinel {
		opts.MasterName = r.SentinelMaster
		opts.SentinelPassword = r.SentinelPassword
		if r.SentinelPasswordFile != "" {
			if opts.SentinelPassword, err = readSecret(r.SentinelPasswordFile, "sentinel_password_file"); err != nil {
				return nil, invalidf("redis.sentinel-password-file: %v", err)
			}
		}
	}
	if file := r.PasswordFile; file != "" {
		if _, err := readSecret(file, "password_file"); err != nil {
			return nil, invalidf("redis.password-file: %v", err)
		}
		user := res.username
		opts.CredentialsProviderContext = func(context.Context) (string, string, error) {
			pw, err := readSecret(file, "password_file")
			return user, pw, err
		}
	}
	return opts, nil
}

// readSecret reads a password file; one trailing newline (as editors and echo leave) is not
// part of the password. Its errors never quote the path: a password pasted where the file's
// path belongs would be printed, so they say "the file given in" the setting (key names the
// YAML key, password_file or sentinel_password_file).
func readSecret(path, key string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		cause := errors.Unwrap(err) // the system's reason, without the path
		if cause == nil {
			cause = errors.New("cannot be read")
		}
		return "", fmt.Errorf("the file given in %s: %v", key, cause)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", fmt.Errorf("the file given in %s is empty", key)
	}
	return s, nil
}

// tlsConfig builds the rediss:// TLS configuration with prometheus/common/config, as Prometheus
// builds its scrape clients' (the client certificate is read again on every handshake, so a
// rotated certificate needs no restart); nil when the addresses are not rediss://. The files are
// checked here first so that a bad one is reported naming its setting.
func (r Redis) tlsConfig() (*tls.Config, error) {
	res, err := r.resolve()
	if err != nil || !res.tls {
		return nil, err
	}
	t := r.TLS
	if err := t.checkFiles(); err != nil {
		return nil, err
	}
	cfg, err := promconfig.NewTLSConfig(&promconfig.TLSConfig{
		CAFile:             t.CAFile,
		CertFile:           t.CertFile,
		KeyFile:            t.KeyFile,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, // an explicit, documented operator choice
		MinVersion:         promconfig.TLSVersion(tls.VersionTLS12),
	})
	if err != nil {
		return nil, invalidf("redis TLS settings: %s", OneLine(err))
	}
	return cfg, nil
}

// checkFiles reports an unreadable or unusable TLS file, naming its setting.
func (t TLS) checkFiles() error {
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return invalidf("redis.tls-ca-file: %v", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return invalidf("redis.tls-ca-file %s: no PEM certificate found", t.CAFile)
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return invalidf("redis.tls-cert-file and redis.tls-key-file go together")
	}
	if t.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			return invalidf("redis.tls-cert-file/redis.tls-key-file: %v", OneLine(err))
		}
	}
	return nil
}

// OneLine is err's message on one line: multi-line errors of the YAML and TLS packages would
// break the one-line error a bad flag or file gets.
func OneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
