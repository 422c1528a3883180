package collectors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// The bounds of one look for keys of types a namespace does not count. The walk asks Redis for
// string keys only (SCAN ... TYPE string) and the index keeps only the types a namespace
// declares, so a Redisson lock (a hash) under a namespace that counts strings is invisible to
// both: lock_keys 0 and nothing else. The look is the one place that sees such keys. It runs
// beside the scrapes, never in one, so its cost never reaches a scrape's deadline.
const (
	// uncountedLookKeys is the most keys matched by a namespace's pattern whose TYPE one look
	// asks, per node: enough to tell a namespace of hash locks from one stray key, and a bounded
	// cost (one TYPE each) whatever the namespace's size.
	uncountedLookKeys = 1000
	// uncountedLookTimeout bounds one look at all the namespaces, each with an equal share. A
	// pattern that matches little in a large keyspace makes SCAN MATCH walk it all; what was
	// seen by the deadline is reported.
	uncountedLookTimeout = 5 * time.Second
)

// uncountedTypes finds, by a bounded look at start and then every Options.BackstopEvery, keys
// that a namespace's pattern matches but whose type the namespace does not count. It logs one
// hint per namespace for the Scanner's life and exports the last look's counts.
type uncountedTypes struct {
	client   redis.UniversalClient
	opts     Options
	firstRun chan struct{} // closed when the first look has ended (tests wait on it)

	mu     sync.Mutex
	counts []map[string]int64 // per Options.Namespaces position: type → keys seen, last look
	hinted map[string]bool    // namespaces already logged
}

func newUncountedTypes(client redis.UniversalClient, opts Options) *uncountedTypes {
	return &uncountedTypes{
		client:   client,
		opts:     opts,
		firstRun: make(chan struct{}),
		hinted:   map[string]bool{},
	}
}

func (u *uncountedTypes) loop(ctx context.Context) {
	every := u.opts.BackstopEvery
	if every <= 0 {
		every = DefaultBackstopEvery
	}
	for first := true; ; first = false {
		u.look(ctx)
		if first {
			close(u.firstRun)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// look types up to uncountedLookKeys keys per namespace and node, records the counts and logs
// the namespaces newly found with keys of an uncounted type.
func (u *uncountedTypes) look(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, uncountedLookTimeout)
	defer cancel()
	counts := make([]map[string]int64, len(u.opts.Namespaces))
	var mu sync.Mutex
	// Each namespace has its share of the time, so that one whose pattern makes SCAN walk a
	// large keyspace leaves the others theirs.
	share := uncountedLookTimeout / time.Duration(len(u.opts.Namespaces))
	lookNode := func(c redis.Cmdable) {
		for i, ns := range u.opts.Namespaces {
			nsCtx, cancel := context.WithTimeout(ctx, share)
			found := uncountedOnNode(nsCtx, c, ns, u.opts.BatchSize)
			cancel()
			mu.Lock()
			counts[i] = addCounts(counts[i], found)
			mu.Unlock()
		}
	}
	if cc, ok := u.client.(*redis.ClusterClient); ok {
		// A slot map that cannot be loaded leaves nothing to look at: the scrapes report it.
		_ = walk.ForEachMaster(ctx, cc, func(c *redis.Client) { lookNode(c) })
	} else {
		lookNode(u.client)
	}
	u.mu.Lock()
	u.counts = counts
	u.mu.Unlock()
	u.hint(counts)
}

// uncountedOnNode types, with one pipelined TYPE per key, the keys of one node that ns's
// pattern matches, up to uncountedLookKeys of them, and counts those of types ns does not
// count. It stops at ctx's end with what it has: a failed look is no worse than none.
func uncountedOnNode(ctx context.Context, c redis.Cmdable, ns Namespace, batch int) map[string]int64 {
	found := map[string]int64{}
	typed := 0
	var cursor uint64
	for typed < uncountedLookKeys {
		keys, next, err := c.Scan(ctx, cursor, ns.Pattern, int64(batch)).Result()
		if err != nil {
			return found
		}
		keys = keys[:min(len(keys), uncountedLookKeys-typed)]
		typed += len(keys)
		types, err := keyTypes(ctx, c, keys)
		if err != nil {
			return found
		}
		for _, t := range types {
			if t != "none" && !ns.wants(t) {
				found[t]++
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	return found
}

// keyTypes answers TYPE for each key in one pipeline; a key gone since SCAN is "none".
func keyTypes(ctx context.Context, c redis.Cmdable, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StatusCmd, len(keys))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Type(ctx, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	types := make([]string, len(cmds))
	for i, cmd := range cmds {
		types[i] = cmd.Val()
	}
	return types, nil
}

func addCounts(into, from map[string]int64) map[string]int64 {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = map[string]int64{}
	}
	for t, n := range from {
		into[t] += n
	}
	return into
}

// hint logs one WARN line for each namespace found with keys of an uncounted type for the
// first time, so a scrape interval's worth of repeats never buries it.
func (u *uncountedTypes) hint(counts []map[string]int64) {
	for i, found := range counts {
		ns := u.opts.Namespaces[i]
		if len(found) == 0 || u.hinted[ns.Name] {
			continue
		}
		u.hinted[ns.Name] = true
		for _, typ := range slices.Sorted(maps.Keys(found)) {
			u.opts.Logger.Warn("lock namespace pattern matches keys of a type the namespace does not count",
				"lock_namespace", ns.Name, "pattern", ns.Pattern, "type", typ, "keys", found[typ],
				"fix", uncountedFix(ns, typ))
		}
	}
}

// uncountedFix is what the user changes: declare the type when the exporter can count it,
// narrow the pattern when it cannot.
func uncountedFix(ns Namespace, typ string) string {
	if typ != TypeHash {
		return fmt.Sprintf("the exporter counts string and hash locks only: narrow the pattern so that it matches the lock keys alone (%s keys are not locks it can read)", typ)
	}
	types := append(slices.Clone(ns.Types), TypeHash)
	if len(ns.Types) == 0 {
		types = []string{TypeHash}
	}
	return fmt.Sprintf("if these are the namespace's locks (Redisson keeps its locks in hashes), declare the type: types: [%s] in the config file, or --type %s with --namespace",
		strings.Join(types, ", "), strings.Join(types, ","))
}

// lastCounts returns the last look's counts, per Options.Namespaces position: type → keys seen.
// It never waits on a look.
func (u *uncountedTypes) lastCounts() []map[string]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.counts)
}
