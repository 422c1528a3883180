package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/collectors"
)

const inspectSynopsis = "lock-exporter inspect [flags] [NAMESPACE]\n\n" +
	"Lists a namespace's live locks, keys without TTL first, then the stalest, with remaining TTL,\n" +
	"idle time, fence value and holder (written by lease namespaces with RecordHolder). Name the\n" +
	"namespace as an argument or with --namespace NAME (a configured one), or define it with\n" +
	"--namespace NAME=PATTERN; it may be left out when only one is configured. Lock values (owner\n" +
	"tokens) are never read: the scan uses SCAN, PTTL, OBJECT IDLETIME (and TYPE), and GET only on\n" +
	"fence and holder keys. Exit status 3: the scan was cut short or stopped at --scan.max-keys, so\n" +
	"the counts are a lower bound."

const defaultInspectLimit = 20

// exitPartial is inspect's status when it printed a partial answer: the deadline cut the scan,
// the key cap stopped it, or a command on the namespace's keys failed. 1 stays "Redis unreachable".
const exitPartial = 3

// companionTimeout bounds the fence and holder look-up that follows the scan, and the PING that
// tells a deadline too short for Redis' first reply from an unreachable Redis.
const companionTimeout = 2 * time.Second

// inspectFlags are inspect's own flags.
type inspectFlags struct {
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

func runInspect(ctx context.Context, e *env, args []string) int {
	fl := inspectFlags{limit: defaultInspectLimit, sort: "idle", output: "table", noTTLFirst: true}
	st, fs, err := parseSettings(e, "lock-exporter inspect", args, func(fs *pflag.FlagSet, st *settings) {
		defineConfigFlags(fs, st)
		fs.IntVar(&fl.limit, "limit", fl.limit, fmt.Sprintf("list at most this many keys (1 to %d)", collectors.MaxTopK))
		fs.StringVar(&fl.sort, "sort", fl.sort, "order of the listed keys: idle (stalest first) or ttl (shortest remaining TTL first)")
		fs.StringVar(&fl.output, "output", fl.output, "table, or json (full key names, for scripts)")
		fs.BoolVar(&fl.noTTLFirst, "without-ttl-first", fl.noTTLFirst, "list keys without expiry before the others")
	}, true)
	if err != nil {
		return handleParseError(e, "inspect", inspectSynopsis, fs, err)
	}
	ns, err := pickNamespace(st, append(st.selectors, fs.Args()...))
	if err != nil {
		return usageError(e, "inspect", err)
	}
	// The list comes from the scanner's top-K, so --limit shares the exporter's bound on it: the
	// heaps are sized by it and every listed key costs a fence GET in one pipeline.
	if err := fl.validate(); err != nil {
		return usageError(e, "inspect", err)
	}
	client, err := st.cfg.NewClient()
	if err != nil {
		return usageError(e, "inspect", err)
	}
	defer client.Close()
	opts := st.cfg.ScannerOptions()
	opts.Namespaces = []collectors.Namespace{ns}
	opts.TopK = fl.limit
	opts.FullKeys = true // a handful of keys, printed once
	scanner, err := collectors.NewScanner(client, opts)
	if err != nil {
		return usageError(e, "inspect", err)
	}
	defer scanner.Close()

	scanCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	res := scanner.Scan(scanCtx)
	cancel()
	if !res.Up && !(errors.Is(res.Err, collectors.ErrNoAnswer) && answersPing(ctx, client)) {
		fmt.Fprintf(e.stderr, "lock-exporter inspect: cannot read Redis (%s): %s\n", st.cfg.Redis.Describe(), oneLine(res.Err))
		return exitFailure
	}
	// Up, or reachable but cut before its first reply: the namespace result is then incomplete
	// (a lower bound, possibly 0 keys) and the report says PARTIAL.
	nr := res.Namespaces[0]
	rows := listedKeys(nr, fl)
	comp := readCompanions(ctx, client, rows)
	rep := newInspectReport(nr, res.IdleTimeAvailable, rows, comp, opts.MaxKeys)
	if fl.output == "json" {
		if err := rep.writeJSON(e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "lock-exporter inspect: %s\n", oneLine(err))
			return exitFailure
		}
	} else {
		rep.writeTable(e.stdout)
	}
	if int64(len(rows)) < nr.Keys {
		fmt.Fprintf(e.stderr, "note: showing %d of %d keys (--limit)\n", len(rows), nr.Keys)
	}
	if !res.IdleTimeAvailable {
		fmt.Fprintln(e.stderr, "note: OBJECT IDLETIME is refused under an LFU maxmemory-policy; keys are listed by name")
	}
	if comp.fenceErr != nil {
		fmt.Fprintf(e.stderr, "note: fence values unavailable: %s\n", oneLine(comp.fenceErr))
	}
	if comp.holderErr != nil {
		fmt.Fprintf(e.stderr, "note: holders unavailable: %s\n", oneLine(comp.holderErr))
	}
	if rep.Partial {
		return exitPartial
	}
	return exitOK
}

// listedKeys picks at most limit keys: those without expiry first (unless turned off), then the
// stalest others, each once; then orders them as --sort says, keeping the keys without TTL ahead.
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

// pickNamespace chooses the namespace to inspect: the one named (by argument or by --namespace
// NAME), else the only one --namespace NAME=PATTERN defined, else the only one configured.
func pickNamespace(st *settings, named []string) (collectors.Namespace, error) {
	all := st.cfg.ScannerOptions().Namespaces
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
	case len(st.flagNamespaces) == 1:
		ns, _ := byName(st.flagNamespaces[0])
		return ns, nil
	case len(all) == 1:
		return all[0], nil
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
