package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/collectors"
)

const inspectSynopsis = "lock-exporter inspect [flags] [NAMESPACE]\n\n" +
	"Lists a namespace's live locks with remaining TTL, idle time, fence value and holder (written\n" +
	"by lease namespaces with RecordHolder): keys without TTL first, then the stalest (--sort idle),\n" +
	"or the shortest remaining TTL first and keys without TTL last (--sort ttl). Name the\n" +
	"namespace as an argument or with --namespace NAME (a configured one), or define it with\n" +
	"--namespace NAME=PATTERN; it may be left out when only one is configured. --target NAME reads\n" +
	"that configured target's Redis (targets: in --config.file) instead of the redis section's.\n" +
	"Lock values (owner tokens) are never read: the scan uses SCAN, PTTL, OBJECT IDLETIME (and\n" +
	"TYPE), and GET only on fence and holder keys. Exit status 3: the scan was cut short or stopped\n" +
	"at --scan.max-keys, so the counts are a lower bound."

const defaultInspectLimit = 20

// exitPartial is inspect's status when it printed a partial answer: the deadline cut the scan,
// the key cap stopped it, or a command on the namespace's keys failed. 1 stays "Redis unreachable".
const exitPartial = 3

// companionTimeout bounds the fence and holder look-up that follows the scan.
const companionTimeout = 2 * time.Second

// answerGrace is how long past --scan.timeout inspect waits for Redis' first reply when the scan
// got none: the PING that tells a deadline too short for that reply from a Redis that does not
// answer ends then. It is the second the scanner already gives a command sent before its
// deadline (collectors' commandGrace), so the scan's own commands end at the same moment and a
// Redis that never answers (paused, or a dial that hangs) ends inspect at --scan.timeout plus
// this grace.
const answerGrace = time.Second

// inspectFlags are inspect's own flags.
type inspectFlags struct {
	target     string
	limit      int
	sort       string
	output     string
	noTTLFirst bool
}

func (f *inspectFlags) validate() error {
	switch {
	case f.limit < 1:
		return fmt.Errorf("--limit must be at least 1, got %d", f.limit)
	case f.limit > collectors.MaxTopK:
		return fmt.Errorf("--limit must be at most %d, got %d", collectors.MaxTopK, f.limit)
	case f.sort != "idle" && f.sort != "ttl":
		return fmt.Errorf("--sort %q: want idle or ttl", f.sort)
	case f.output != "table" && f.output != "json":
		return fmt.Errorf("--output %q: want table or json", f.output)
	}
	return nil
}

// defaultWithoutTTLFirst sets --without-ttl-first when neither the command line nor the
// environment did. Keys without expiry are the stuck locks, so the stalest-first list leads with
// them; --sort ttl promises the keys that expire soonest first, and a key that never expires is
// the last of those.
func (f *inspectFlags) defaultWithoutTTLFirst(fs *pflag.FlagSet) {
	if !fs.Changed("without-ttl-first") {
		f.noTTLFirst = f.sort == "idle"
	}
}

// define adds inspect's flags to the shared ones.
func (f *inspectFlags) define(fs *pflag.FlagSet, st *settings) {
	defineConfigFlags(fs, st)
	fs.StringVar(&f.target, "target", f.target, "read the configured target of this name (targets: in --config.file) instead of the redis section's Redis")
	cli.IntVar(fs, &f.limit, "limit", f.limit, fmt.Sprintf("list at most this many keys (1 to %d)", collectors.MaxTopK))
	fs.StringVar(&f.sort, "sort", f.sort, "order of the listed keys: idle (stalest first) or ttl (shortest remaining TTL first)")
	fs.StringVar(&f.output, "output", f.output, "table, or json (full key names, for scripts)")
	cli.BoolVar(fs, &f.noTTLFirst, "without-ttl-first", f.noTTLFirst, "list keys without expiry before the others (default: yes with --sort idle, no with --sort ttl)")
}

// runInspect parses, picks the namespace, scans it once and prints what it found.
func runInspect(ctx context.Context, e *env, args []string) int {
	fl := inspectFlags{limit: defaultInspectLimit, sort: "idle", output: "table"}
	st, fs, err := parseSettings(e, "lock-exporter inspect", args, fl.define, true)
	if err != nil {
		return handleParseError(e, "inspect", inspectSynopsis, fs, err)
	}
	fl.defaultWithoutTTLFirst(fs)
	cfg, err := inspectedConfig(st, fl.target)
	if err != nil {
		return usageError(e, "inspect", err)
	}
	ns, err := chooseNamespace(cfg, st, fs, &fl)
	if err != nil {
		return usageError(e, "inspect", err)
	}
	client, err := cfg.NewClient()
	if err != nil {
		return usageError(e, "inspect", err)
	}
	defer client.Close()
	opts := inspectScanOptions(cfg, ns, fl)
	scanner, err := collectors.NewScanner(client, opts)
	if err != nil {
		return usageError(e, "inspect", err)
	}
	deadline := time.Now().Add(opts.Timeout)
	res := scanOnce(ctx, scanner, deadline)
	if !res.Up {
		// The PING shares the scan's grace: asked after the scanner closed, it would start only
		// when the scan's last commands gave up, a second past the deadline, and wait longer.
		pingErr := redisAnswers(ctx, client, deadline.Add(answerGrace))
		if pingErr != nil {
			scanner.Close()
			fmt.Fprintf(e.Stderr, "lock-exporter inspect: %s\n", unreadable(cfg, fl.target, opts.Timeout, res.Err, pingErr))
			return exitFailure
		}
	}
	scanner.Close()
	if res.Up {
		warnClusterNode(ctx, e, client, cfg.Redis.Addr)
	}
	// Up, or Redis answered but the scan failed or was cut before its first reply: the namespace
	// result is then incomplete (a lower bound, possibly 0 keys) and the report says FAILED or
	// PARTIAL, with exit status 3.
	return printInspection(ctx, e, client, res, fl, opts.MaxKeys)
}

// clusterCheckTimeout bounds the INFO that tells whether an addr is a Redis Cluster node.
const clusterCheckTimeout = 2 * time.Second

// warnClusterNode notes on stderr when the Redis read through addr is one node of a Redis
// Cluster: the report then covers that node's keys only (exporterconfig.IsClusterNode).
func warnClusterNode(ctx context.Context, e *env, client redis.UniversalClient, addr string) {
	check, cancel := context.WithTimeout(ctx, clusterCheckTimeout)
	defer cancel()
	if exporterconfig.IsClusterNode(check, client) {
		fmt.Fprintf(e.Stderr, "note: Redis at %s %s\n", exporterconfig.RedactAddr(addr), exporterconfig.ClusterNodeHint)
	}
}

// chooseNamespace is the namespace named by argument or --namespace, with --limit, --sort and
// --output checked.
func chooseNamespace(cfg exporterconfig.Config, st *settings, fs *pflag.FlagSet, fl *inspectFlags) (collectors.Namespace, error) {
	ns, err := pickNamespace(cfg.ScannerOptions().Namespaces, st.flagNamespaces, append(st.selectors, fs.Args()...))
	if err != nil {
		return ns, err
	}
	// The list comes from the scanner's top-K, so --limit shares the exporter's bound on it: the
	// heaps are sized by it and every listed key costs a fence GET in one pipeline.
	return ns, fl.validate()
}

// inspectedConfig is the configuration whose Redis inspect reads: the settings' own, or with
// --target the named target's, as its scrapes use it (its connection settings, the file's scan
// settings, its own namespaces or else the file's). The redis.* flags and LOCK_EXPORTER_REDIS_*
// variables set the redis section, which --target leaves aside, so a pod's environment does not
// stand in its way; namespaces defined with --namespace NAME=PATTERN are always inspectable.
func inspectedConfig(st *settings, target string) (exporterconfig.Config, error) {
	cfg := st.cfg
	if target == "" {
		return cfg, nil
	}
	if len(cfg.Targets) == 0 {
		return cfg, fmt.Errorf("--target %q: no targets configured (targets: in --config.file)", target)
	}
	t, err := cfg.TargetNamed(target)
	if err != nil {
		names := make([]string, len(cfg.Targets))
		for i, t := range cfg.Targets {
			names[i] = t.Name
		}
		return cfg, fmt.Errorf("--target %q: %w (configured: %s)", target, err, strings.Join(names, ", "))
	}
	sub := cfg.ForTarget(t)
	if len(t.Namespaces) == 0 {
		return sub, nil // the file's namespaces, with those of the flags among them
	}
	sub.Namespaces = slices.Clone(sub.Namespaces)
	for _, ns := range cfg.Namespaces {
		if slices.Contains(st.flagNamespaces, ns.Name) {
			sub.Namespaces = append(sub.Namespaces, ns)
		}
	}
	if err := sub.Validate(); err != nil { // a flag's namespace may take a target's name
		return sub, fmt.Errorf("--target %q: %w", target, err)
	}
	return sub, nil
}

// describeInspected names the Redis inspect read, for its error line.
func describeInspected(cfg exporterconfig.Config, target string) string {
	if target == "" {
		return cfg.Redis.Describe()
	}
	return fmt.Sprintf("target %q, %s", target, cfg.Redis.Describe())
}

// unreadable is inspect's error line, after its prefix, when neither the scan nor the PING after
// it got an answer: that Redis did not answer in time when the PING timed out (a paused Redis, a
// dial that hangs), in inspect's terms rather than the scanner's scrape deadline; otherwise the
// error that stopped it (connection refused, WRONGPASS, a TLS error).
func unreadable(cfg exporterconfig.Config, target string, timeout time.Duration, scanErr, pingErr error) string {
	if timedOut(pingErr) {
		where := "Redis at " + cfg.Redis.Describe()
		if target != "" {
			where = fmt.Sprintf("target %q's Redis at %s", target, cfg.Redis.Describe())
		}
		line := fmt.Sprintf("%s did not answer within --scan.timeout %v (nor in the %v after it)", where, timeout, answerGrace)
		if cfg.Redis.UsesTLS() {
			line += "; with rediss://, check that Redis serves TLS there: a Redis without TLS on that port does not answer a TLS handshake"
		}
		return line
	}
	cause := scanErr
	if cause == nil || errors.Is(cause, collectors.ErrNoAnswer) {
		cause = pingErr // the scan heard nothing, the PING heard why
	}
	line := fmt.Sprintf("cannot read Redis (%s): %s", describeInspected(cfg, target), oneLine(cause))
	if !cfg.Redis.UsesTLS() && closedAtOnce(cause) {
		line += " (Redis closed the connection: if it serves TLS, use a rediss:// address)"
	}
	return line
}

// closedAtOnce reports whether err is the peer closing the connection before any reply: what a
// TLS-only Redis does to a client that speaks plain RESP.
func closedAtOnce(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || err != nil && err.Error() == "EOF"
}

// timedOut reports whether err is a wait that ran out: a context deadline, or a socket timeout.
func timedOut(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// inspectScanOptions scans the one namespace, keeping --limit keys with their full names.
func inspectScanOptions(cfg exporterconfig.Config, ns collectors.Namespace, fl inspectFlags) collectors.Options {
	opts := cfg.ScannerOptions()
	opts.Namespaces = []collectors.Namespace{ns}
	opts.TopK = fl.limit
	opts.FullKeys = true // a handful of keys, printed once
	// --sort ttl lists the keys that expire soonest, which the stalest need not include.
	opts.Soonest = fl.sort == "ttl"
	opts.Mode = collectors.ModeWalk // one-shot: an index would cost a walk and a feed for one look
	return opts
}

// scanOnce runs one scan until deadline. The scanner stays open: Close waits for the commands
// still in flight, up to the scanner's grace past the deadline.
func scanOnce(ctx context.Context, scanner *collectors.Scanner, deadline time.Time) *collectors.Result {
	scanCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return scanner.Scan(scanCtx)
}

// printInspection looks up the listed keys' fence values and holders, prints the report and
// its notes, and returns the exit status: exitPartial when the counts are a lower bound.
func printInspection(ctx context.Context, e *env, client redis.UniversalClient, res *collectors.Result, fl inspectFlags, maxKeys int) int {
	nr := res.Namespaces[0]
	if !res.Up && nr.Err == nil && res.Err != nil && !errors.Is(res.Err, collectors.ErrNoAnswer) {
		// A failure of the whole pass (SCAN refused, say) is this namespace's failure too.
		nr.Err, nr.Complete = res.Err, false
	}
	rows := listedKeys(nr, fl)
	comp := readCompanions(ctx, client, rows)
	rep := newInspectReport(nr, res.IdleTimeAvailable, rows, comp, maxKeys)
	if fl.output == "json" {
		if err := rep.writeJSON(e.Stdout); err != nil {
			fmt.Fprintf(e.Stderr, "lock-exporter inspect: %s\n", oneLine(err))
			return exitFailure
		}
	} else {
		rep.writeTable(e.Stdout)
	}
	printNotes(e, len(rows), nr.Keys, res.IdleTimeAvailable, comp)
	if nr.Keys == 0 && nr.Err == nil {
		if typ, n := otherTypeKeys(ctx, client, nr.Namespace); typ != "" {
			fmt.Fprintln(e.Stderr, typeHint(nr.Namespace, typ, n))
		}
	}
	if rep.Partial {
		return exitPartial
	}
	return exitOK
}

// printNotes says on stderr what the report could not show.
func printNotes(e *env, listed int, keys int64, idleTimeAvailable bool, comp companions) {
	if int64(listed) < keys {
		fmt.Fprintf(e.Stderr, "note: showing %d of %d keys (--limit)\n", listed, keys)
	}
	if !idleTimeAvailable {
		fmt.Fprintln(e.Stderr, "note: OBJECT IDLETIME is refused under an LFU maxmemory-policy; keys are listed by name")
	}
	if comp.fenceErr != nil {
		fmt.Fprintf(e.Stderr, "note: fence values unavailable: %s\n", oneLine(comp.fenceErr))
	}
	if comp.holderErr != nil {
		fmt.Fprintf(e.Stderr, "note: holders unavailable: %s\n", oneLine(comp.holderErr))
	}
}

// listedKeys picks at most limit keys: those without expiry first (--without-ttl-first), then
// those that expire soonest (--sort ttl), then the stalest, each once; then orders them as --sort
// says, the keys without TTL ahead with --without-ttl-first. --sort ttl picks the keys without
// expiry after the soonest ones: they fill only what the keys with an expiry leave of the limit.
func listedKeys(nr collectors.NamespaceResult, fl inspectFlags) []collectors.KeyInfo {
	var rows []collectors.KeyInfo
	seen := map[string]bool{}
	add := func(keys []collectors.KeyInfo) {
		for _, k := range keys {
			if len(rows) < fl.limit && !seen[k.Key] {
				seen[k.Key] = true
				rows = append(rows, k)
			}
		}
	}
	if fl.noTTLFirst {
		add(nr.StalestNoTTL)
	}
	if fl.sort == "ttl" {
		add(nr.Soonest)
		add(nr.StalestNoTTL)
	}
	add(nr.Stalest)
	slices.SortStableFunc(rows, func(a, b collectors.KeyInfo) int {
		if fl.noTTLFirst && (a.TTL == collectors.NoTTL) != (b.TTL == collectors.NoTTL) {
			if a.TTL == collectors.NoTTL {
				return -1
			}
			return 1
		}
		if fl.sort == "ttl" {
			return cmp.Compare(ttlOrder(a.TTL), ttlOrder(b.TTL))
		}
		return cmp.Compare(b.Idle, a.Idle)
	})
	return rows
}

// ttlOrder sorts keys without expiry after every key with one.
func ttlOrder(ttl time.Duration) time.Duration {
	if ttl == collectors.NoTTL {
		return time.Duration(math.MaxInt64)
	}
	return ttl
}

// pickNamespace chooses the namespace to inspect among all: the one named (by argument or by
// --namespace NAME), else the only one --namespace NAME=PATTERN defined (flagNamespaces), else
// the only one configured.
func pickNamespace(all []collectors.Namespace, flagNamespaces, named []string) (collectors.Namespace, error) {
	byName := func(name string) (collectors.Namespace, bool) {
		for _, ns := range all {
			if ns.Name == name {
				return ns, true
			}
		}
		return collectors.Namespace{}, false
	}
	var names []string
	for _, ns := range all {
		names = append(names, ns.Name)
	}
	switch {
	case len(named) > 1:
		return collectors.Namespace{}, fmt.Errorf("name one namespace, got %d: %s", len(named), strings.Join(named, ", "))
	case len(named) == 1:
		if ns, ok := byName(named[0]); ok {
			return ns, nil
		}
		return collectors.Namespace{}, fmt.Errorf("unknown namespace %q (configured: %s)", named[0], strings.Join(names, ", "))
	case len(flagNamespaces) == 1:
		ns, _ := byName(flagNamespaces[0])
		return ns, nil
	case len(all) == 1:
		return all[0], nil
	case len(all) == 0: // an exporter of targets alone, each with namespaces of its own
		return collectors.Namespace{}, errors.New("no namespace configured for the redis section's Redis: give --namespace NAME=PATTERN, or --target NAME to read a target")
	}
	return collectors.Namespace{}, fmt.Errorf("name the namespace to inspect (configured: %s)", strings.Join(names, ", "))
}

func formatTTL(ttl time.Duration) string {
	if ttl == collectors.NoTTL {
		return "none"
	}
	return ttl.Round(time.Millisecond).String()
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
