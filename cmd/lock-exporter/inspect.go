package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/collectors"
	"github.com/lockwatch/lockwatch/lease"
)

const inspectSynopsis = "lock-exporter inspect [flags] [NAMESPACE]\n\n" +
	"Lists a namespace's live locks, stalest first, with remaining TTL, idle time and fence value.\n" +
	"Name the namespace as an argument or with --namespace NAME (a configured one), or define it\n" +
	"with --namespace NAME=PATTERN; it may be left out when only one is configured. Lock values\n" +
	"(owner tokens) are never read: the scan uses SCAN, PTTL and OBJECT IDLETIME, and GET only\n" +
	"on fence keys."

const defaultInspectLimit = 20

// fenceTimeout bounds the fence look-up that follows the scan.
const fenceTimeout = 2 * time.Second

func runInspect(ctx context.Context, e *env, args []string) int {
	limit := defaultInspectLimit
	st, fs, err := parseSettings(e, "lock-exporter inspect", args, func(fs *pflag.FlagSet, st *settings) {
		defineConfigFlags(fs, st)
		fs.IntVar(&limit, "limit", limit, fmt.Sprintf("list at most this many of the stalest keys (1 to %d)", collectors.MaxTopK))
	}, true)
	if err != nil {
		return handleParseError(e, "inspect", inspectSynopsis, fs, err)
	}
	ns, err := pickNamespace(st, append(st.selectors, fs.Args()...))
	if err != nil {
		return usageError(e, "inspect", err)
	}
	// The list is the scanner's top-K, so --limit shares the exporter's bound on it: the heap is
	// sized by it and every listed key costs a fence GET in one pipeline.
	switch {
	case limit < 1:
		return usageError(e, "inspect", fmt.Errorf("--limit must be at least 1, got %d", limit))
	case limit > collectors.MaxTopK:
		return usageError(e, "inspect", fmt.Errorf("--limit must be at most %d, got %d", collectors.MaxTopK, limit))
	}
	client, err := st.cfg.NewClient()
	if err != nil {
		return usageError(e, "inspect", err)
	}
	defer client.Close()
	opts := st.cfg.ScannerOptions()
	opts.Namespaces = []collectors.Namespace{ns}
	opts.TopK = limit
	scanner, err := collectors.NewScanner(client, opts)
	if err != nil {
		return usageError(e, "inspect", err)
	}
	defer scanner.Close()

	scanCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	res := scanner.Scan(scanCtx)
	cancel()
	if !res.Up {
		fmt.Fprintf(e.stderr, "lock-exporter inspect: cannot read Redis (%s): %s\n", describeRedis(st), oneLine(res.Err))
		return exitFailure
	}
	nr := res.Namespaces[0]
	fences, fenceErr := readFences(ctx, client, nr.Stalest)

	fmt.Fprintf(e.stdout, "namespace %q (pattern %q): %d live keys, %d without TTL", ns.Name, ns.Pattern, nr.Keys, nr.KeysWithoutTTL)
	if nr.HasTTL {
		fmt.Fprintf(e.stdout, ", shortest TTL %s", formatTTL(nr.MinTTL))
	}
	fmt.Fprintf(e.stdout, "; scanned in %s\n", nr.Duration.Round(time.Millisecond))
	if len(nr.Stalest) > 0 {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tTTL\tIDLE\tFENCE")
		for i, k := range nr.Stalest {
			idle := "n/a"
			if res.IdleTimeAvailable {
				idle = k.Idle.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", collectors.PrintableKey(k.Key), formatTTL(k.TTL), idle, fences[i])
		}
		tw.Flush()
	}

	if int64(len(nr.Stalest)) < nr.Keys {
		fmt.Fprintf(e.stderr, "note: showing the %d stalest of %d keys (--limit)\n", len(nr.Stalest), nr.Keys)
	}
	if !nr.Complete {
		fmt.Fprintf(e.stderr, "note: the scan was cut short after %s (--scan.timeout); the list covers the keys seen\n", nr.Duration.Round(time.Millisecond))
	}
	if nr.Truncated {
		fmt.Fprintf(e.stderr, "note: stopped at --scan.max-keys %d; more keys match\n", opts.MaxKeys)
	}
	if !res.IdleTimeAvailable {
		fmt.Fprintln(e.stderr, "note: OBJECT IDLETIME is refused under an LFU maxmemory-policy; keys are listed by name")
	}
	if fenceErr != nil {
		fmt.Fprintf(e.stderr, "note: fence values unavailable: %s\n", oneLine(fenceErr))
	}
	return exitOK
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

// readFences GETs the fence counter of each key (lease.FenceKey), never the lock key itself:
// lock values are owner tokens. A key without a fence counter shows "-".
func readFences(ctx context.Context, client redis.UniversalClient, keys []collectors.KeyInfo) ([]string, error) {
	out := make([]string, len(keys))
	for i := range out {
		out[i] = "?"
	}
	if len(keys) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, fenceTimeout)
	defer cancel()
	pipe := client.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Get(ctx, lease.FenceKey(k.Key))
	}
	_, _ = pipe.Exec(ctx)
	var firstErr error
	for i, cmd := range cmds {
		v, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
			out[i] = "-"
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
		default:
			// A fence counter is an integer; anything else is not ours to print.
			if _, perr := strconv.ParseInt(v, 10, 64); perr != nil {
				out[i] = "(not a counter)"
			} else {
				out[i] = v
			}
		}
	}
	return out, firstErr
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
