package exporterconfig

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/collectors"
)

// Validate reports the first problem of the configuration, naming the setting and its value.
// Files it refers to (passwords, TLS material) must be readable.
func (c Config) Validate() error {
	if err := c.Scan.validate(); err != nil {
		return err
	}
	// An exporter of targets alone needs no namespaces of the file's when every target lists
	// its own; validateTargets then checks that each one has some.
	if len(c.Namespaces) == 0 && !c.TargetsWithDefaultRedis() {
		return invalidf("no namespace configured: give --namespace NAME=PATTERN or namespaces in --config.file")
	}
	if _, err := checkNamespaces(c.Namespaces); err != nil {
		return err
	}
	if err := c.Redis.CheckAddresses(); err != nil {
		return err
	}
	if _, err := c.Redis.tlsConfig(); err != nil {
		return err
	}
	for _, f := range []struct{ setting, key, path string }{
		{"redis.password-file", "password_file", c.Redis.PasswordFile},
		{"redis.sentinel-password-file", "sentinel_password_file", c.Redis.SentinelPasswordFile},
	} {
		if f.path == "" {
			continue
		}
		if _, err := readSecret(f.path, f.key); err != nil {
			return invalidf("%s: %v", f.setting, err)
		}
	}
	if c.Redis.PasswordFile != "" && c.Redis.Password != "" {
		return invalidf("both redis.password-file and LOCK_EXPORTER_REDIS_PASSWORD are set; keep one")
	}
	if c.Redis.SentinelPasswordFile != "" && c.Redis.SentinelPassword != "" {
		return invalidf("both redis.sentinel-password-file and LOCK_EXPORTER_REDIS_SENTINEL_PASSWORD are set; keep one")
	}
	return c.validateTargets()
}

// checkNamespaces reports the first namespace that is invalid or whose name an earlier one has,
// and its index.
func checkNamespaces(list []Namespace) (int, error) {
	seen := map[string]bool{}
	for i, ns := range list {
		if err := ns.collector().Validate(); err != nil {
			return i, invalidf("%s", namespaceProblem(err))
		}
		if seen[ns.Name] {
			return i, invalidf("duplicate namespace name %q", ns.Name)
		}
		seen[ns.Name] = true
	}
	return 0, nil
}

// CheckAddresses reports what Validate finds wrong with the redis section's addresses, mode,
// user and TLS use, without reading the files it names: for a configuration written for
// another machine, where the files are mounted.
func (r Redis) CheckAddresses() error {
	_, err := r.resolve()
	return err
}

func (s Scan) validate() error {
	// The upper bounds are the scanner's own (see collectors.MaxBatchSize and MaxTopK for why),
	// checked here so that the message names the setting rather than the scanner's option.
	for _, f := range []struct {
		setting string
		value   int
		max     int // 0: no upper bound
	}{
		{"scan.batch-size", s.BatchSize, collectors.MaxBatchSize},
		{"scan.max-keys", s.MaxKeys, 0},
		{"scan.top-k", s.TopK, collectors.MaxTopK},
		{"scan.index-key-budget", s.IndexKeyBudget, 0},
	} {
		if f.value < 1 {
			return invalidf("%s must be at least 1, got %d", f.setting, f.value)
		}
		if f.max > 0 && f.value > f.max {
			return invalidf("%s must be at most %d, got %d", f.setting, f.max, f.value)
		}
	}
	if s.Timeout <= 0 {
		return invalidf("scan.timeout must be positive, got %s", time.Duration(s.Timeout))
	}
	if s.BackstopKeysPerSecond < 0 {
		return invalidf("scan.backstop-keys-per-second must not be negative, got %d", s.BackstopKeysPerSecond)
	}
	if _, err := collectors.ParseScanMode(s.Mode); err != nil {
		return invalidf("scan.mode %q: want auto or walk", s.Mode)
	}
	if _, err := collectors.ParseFeedSource(s.Feed); err != nil {
		return invalidf("scan.feed %q: want auto, tracking or notifications", s.Feed)
	}
	if s.TakeoverWindow <= 0 {
		return invalidf("scan.takeover-window must be positive, got %s", time.Duration(s.TakeoverWindow))
	}
	if s.TimeoutOffset < 0 {
		return invalidf("scan.timeout-offset must not be negative, got %s", time.Duration(s.TimeoutOffset))
	}
	return nil
}

// mode is how the exporter reaches Redis.
type mode int

const (
	standalone mode = iota
	cluster
	sentinel
)

// resolved is the Redis section reduced to what the client needs.
type resolved struct {
	mode     mode
	addrs    []string
	tls      bool
	username string
	db       int
}

// endpoint is one parsed address: host:port or a redis:// or rediss:// URL.
type endpoint struct {
	hostport string
	tls      bool
	username string
	db       int
}

// resolve reduces the Redis section to what the client needs, checking that its settings agree.
func (r Redis) resolve() (resolved, error) {
	res, setting, list, err := r.addresses()
	if err != nil {
		return res, err
	}
	for i, s := range list {
		if err := res.add(setting, s, i == 0); err != nil {
			return res, err
		}
	}
	if r.Username != "" {
		if res.username != "" && res.username != r.Username {
			return res, invalidf("redis.username %q differs from the user %q in %s", r.Username, res.username, setting)
		}
		res.username = r.Username
	}
	if !res.tls && r.TLS != (TLS{}) {
		return res, invalidf("redis TLS settings need rediss:// addresses (got %s %q)", setting, RedactAddr(list[0]))
	}
	return res, nil
}

// addresses picks the mode and the setting whose addresses are used: cluster_addrs,
// sentinel_addrs or addr, of which only one may be given.
func (r Redis) addresses() (res resolved, setting string, list []string, err error) {
	switch {
	case len(r.ClusterAddrs) > 0 && len(r.SentinelAddrs) > 0:
		return res, "", nil, invalidf("redis.cluster-addr and redis.sentinel-addr are exclusive")
	case len(r.ClusterAddrs) > 0:
		res.mode, setting, list = cluster, "redis.cluster-addr", r.ClusterAddrs
	case len(r.SentinelAddrs) > 0:
		res.mode, setting, list = sentinel, "redis.sentinel-addr", r.SentinelAddrs
		if r.SentinelMaster == "" {
			return res, "", nil, invalidf("redis.sentinel-addr needs redis.sentinel-master (the monitored master's name)")
		}
	default:
		setting, list = "redis.addr", []string{r.Addr}
	}
	if res.mode != standalone && r.Addr != "" && r.Addr != DefaultRedisAddr {
		return res, "", nil, invalidf("redis.addr %q and %s are exclusive", RedactAddr(r.Addr), setting)
	}
	if res.mode != sentinel && r.SentinelMaster != "" {
		return res, "", nil, invalidf("redis.sentinel-master %q needs redis.sentinel-addr", r.SentinelMaster)
	}
	return res, setting, list, nil
}

// add parses address s of setting and adds it to res; every address must agree with the first
// on TLS and the user.
func (res *resolved) add(setting, s string, first bool) error {
	ep, err := parseAddr(s)
	if err != nil {
		// The reason may quote a part of the address (a port with a query, say): redacted too.
		return invalidf("%s %q: %v", setting, RedactAddr(s), RedactMessage(err.Error()))
	}
	if !first && ep.tls != res.tls {
		return invalidf("%s: mix of redis:// and rediss:// addresses", setting)
	}
	if ep.db != 0 && res.mode == cluster {
		return invalidf("%s %q: Redis Cluster has only database 0", setting, RedactAddr(s))
	}
	if ep.username != "" {
		if res.username != "" && res.username != ep.username {
			return invalidf("%s: addresses name different users", setting)
		}
		res.username = ep.username
	}
	res.tls, res.db = ep.tls, ep.db
	res.addrs = append(res.addrs, ep.hostport)
	return nil
}

// RedactAddr returns an address fit for a message: a password in the user information becomes
// "xxxxx" and a query (go-redis reads ?password=…) becomes "?xxxxx". It works on the raw text,
// so an address that does not parse as a URL is redacted as well — "redis:/user:pw@host",
// "user:pw@host:6379" — and when unsure it redacts more rather than less.
func RedactAddr(s string) string {
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = redactUserinfo(s[:at]) + "@" + redactQuery(s[at+1:])
		return s
	}
	return redactQuery(s)
}

// redactUserinfo redacts what follows the user name in everything before an address's last
// '@': the scheme and slashes ("redis://", "redis:/", none) are kept, then the user up to the
// first ':'.
func redactUserinfo(before string) string {
	prefix, info := "", before
	if i := strings.Index(before, ":/"); i >= 0 && isScheme(before[:i]) {
		j := i + 1
		for j < len(before) && before[j] == '/' {
			j++
		}
		prefix, info = before[:j], before[j:]
	}
	user, _, hasPassword := strings.Cut(info, ":")
	if !hasPassword {
		return before
	}
	return prefix + user + ":xxxxx"
}

// redactQuery hides a query, whose parameters may carry a password.
func redactQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i] + "?xxxxx"
	}
	return s
}

// isScheme reports whether s is a URL scheme: a letter, then letters, digits, '+', '-', '.'.
func isScheme(s string) bool {
	for i, r := range s {
		letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || !('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// userinfoPassword finds user:password@ anywhere in a message, with a scheme and slashes
// ("redis://", "redis:/") or without; queryPassword a query of a redis:// URL, or any query
// naming a password.
var (
	notInToken       = `\s"'` + "`"
	userinfoPassword = regexp.MustCompile(`((?:[A-Za-z][A-Za-z0-9+.-]*:/*)?[^:/@` + notInToken + `]*):[^` + notInToken + `]*@`)
	queryPassword    = regexp.MustCompile(`((?:rediss?|unix):/*[^?` + notInToken + `]*)\?[^` + notInToken + `]*|\?[^` + notInToken + `]*password[^` + notInToken + `]*`)
)

// RedactMessage redacts every password an address in a message may carry (RedactAddr for free
// text): a safety net for messages that quote what a user wrote, such as YAML errors.
func RedactMessage(msg string) string {
	msg = userinfoPassword.ReplaceAllString(msg, "${1}:xxxxx@")
	return queryPassword.ReplaceAllStringFunc(msg, func(m string) string {
		if i := strings.IndexByte(m, '?'); i >= 0 {
			return m[:i] + "?xxxxx"
		}
		return m
	})
}

func parseAddr(s string) (endpoint, error) {
	if s == "" {
		return endpoint{}, fmt.Errorf("empty address")
	}
	if !strings.Contains(s, "://") {
		if err := checkHostPort(s); err != nil {
			return endpoint{}, err
		}
		return endpoint{hostport: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return endpoint{}, fmt.Errorf("not a URL")
	}
	var ep endpoint
	switch u.Scheme {
	case "redis":
	case "rediss":
		ep.tls = true
	default:
		return endpoint{}, fmt.Errorf("scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.Host == "" {
		return endpoint{}, fmt.Errorf("no host")
	}
	if _, pw := u.User.Password(); pw {
		return endpoint{}, fmt.Errorf("has a password: use redis.password-file or LOCK_EXPORTER_REDIS_PASSWORD, which stay out of process listings")
	}
	ep.username = u.User.Username()
	ep.hostport = u.Host
	if u.Port() == "" {
		ep.hostport = net.JoinHostPort(u.Hostname(), "6379")
	}
	if err := checkHostPort(ep.hostport); err != nil {
		return endpoint{}, err
	}
	if u.RawQuery != "" {
		return endpoint{}, fmt.Errorf("query parameters are not supported; use the exporter's flags")
	}
	if path := strings.Trim(u.Path, "/"); path != "" {
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return endpoint{}, fmt.Errorf("database %q: want a number", path)
		}
		ep.db = db
	}
	return ep, nil
}

// checkHostPort judges the parts of a host:port that net.SplitHostPort leaves unchecked, so
// that a typo is refused at start rather than retried as a failing dial on every scrape: the
// port is a number from 1 to 65535, and the host is empty (this machine), an IP address or a DNS
// name.
func checkHostPort(hostport string) error {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("want host:port or a redis:// or rediss:// URL")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	if _, err := netip.ParseAddr(host); host != "" && err != nil && !isDNSName(host) {
		return fmt.Errorf("host %q: want a DNS name or an IP address", host)
	}
	return nil
}

// isDNSName reports whether host is made of dot-separated labels of letters, digits, '-' and
// '_' (found in service records and some internal names), with a trailing dot allowed.
func isDNSName(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
