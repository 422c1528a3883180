package index

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/lockmetrics"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// The tests that act on an index node (change its index, run its backstop walk, read its
// server's identity or re-read keys under its lock, stall the listing of a cluster's masters)
// start the node themselves, over a real redis-server, as a Scanner starts one but without the
// Scanner: testNodeOptions, startNode and startCluster. What a node serves a scrape is checked
// against a fresh walk of the server by servedDifferences.

// nodeTestNamespaces are the namespaces the node tests index: lock keys, and the lease library's
// fence and holder keys beside them.
var nodeTestNamespaces = []walk.Namespace{
	{Name: "jobs", Pattern: "jobs:*", StringsOnly: true},
	{Name: "companions", Pattern: "{jobs:*", StringsOnly: true},
}

// testNodeOptions are the options of a test's node over namespaces: each read up to a million
// keys, no backstop walk unless the test paces one, the feed the server offers, hold ages from
// holder records alone (as a walk reads them), no log. edit, when set, changes them.
func testNodeOptions(namespaces []walk.Namespace, edit func(*Options)) Options {
	w := walk.Options{Namespaces: namespaces, BatchSize: 100, MaxKeys: 1_000_000, TopK: 5, Timeout: 10 * time.Second}
	o := Options{
		Namespaces: namespaces, Walk: w, Scrape: w, KeyBudget: w.MaxKeys,
		BackstopKeysPerSecond: -1, BackstopEvery: time.Hour, Feed: FeedKindAuto,
		MoveWaitMax: time.Minute, RecordHoldAgesOnly: true, Logger: slog.New(slog.DiscardHandler),
	}
	if edit != nil {
		edit(&o)
	}
	return o
}

// testEnv is what a Scanner gives the nodes it starts, for o, and the prefixes the feed tracks
// for o's namespaces; it ends with the test, after the nodes started on it are closed.
func testEnv(t *testing.T, c redis.UniversalClient, o Options) (Env, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := walk.NewWalker(ctx, c, o.Walk)
	t.Cleanup(func() {
		cancel()
		w.Close()
	})
	patterns := make([]string, len(o.Namespaces))
	for i, ns := range o.Namespaces {
		patterns[i] = ns.Pattern
	}
	prefixes, ok := TrackingPrefixes(patterns)
	if !ok {
		t.Fatalf("namespaces %v: a pattern without a literal prefix cannot be indexed", patterns)
	}
	life := lifecycle.New(lifecycle.Config{
		Namespaces: make([]lifecycle.Settings, len(o.Namespaces)), Buckets: lockmetrics.HeldSecondsBuckets(), MaxRecentEnds: 1024,
	})
	env := Env{Opts: o, Budget: NewKeyBudget(o.KeyBudget, o.Namespaces, o.Logger), Replies: w.Replies(), Walker: w, Base: ctx, Life: life}
	return env, prefixes
}

// startNode starts an index node of c for o, and waits until its index follows its feed.
func startNode(t *testing.T, c *redis.Client, o Options) *Node {
	t.Helper()
	env, prefixes := testEnv(t, c, o)
	n := NewNode(env, c, prefixes)
	t.Cleanup(n.Close)
	awaitNodeCurrent(t, n)
	return n
}

// startCluster starts the cluster index of cc for o, and waits until every master's index
// serves a scrape.
func startCluster(t *testing.T, cc *redis.ClusterClient, o Options) *Cluster {
	t.Helper()
	env, prefixes := testEnv(t, cc, o)
	ci := NewCluster(env, cc, prefixes)
	t.Cleanup(ci.Close)
	deadline := time.Now().Add(20 * time.Second)
	for {
		served := ci.Collect(context.Background())
		if servedFromIndex(served) == nil {
			return ci
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster index not serving after 20s: %v", servedFromIndex(served))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitNodeCurrent waits, without a scrape (which would drain the feed a test may watch), until
// n's index is built and follows its feed.
func awaitNodeCurrent(t *testing.T, n *Node) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, "the index built and following its feed", func() bool {
		in := n.Inspect()
		return in.Built && in.Current
	})
}

// awaitNodeResyncs waits until n has resynced count times for reason and follows its feed again.
func awaitNodeResyncs(t *testing.T, n *Node, reason string, count int64) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("%d %s resyncs and the index current again", count, reason), func() bool {
		return n.Counts().Resyncs[reason] >= count && n.Inspect().Current
	})
}

// servedFromIndex is nil when served is a scrape served from the index whole: up, every
// namespace from a current index; else what is not.
func servedFromIndex(served Serve) error {
	switch {
	case served.Err != nil:
		return fmt.Errorf("scrape down: %w", served.Err)
	case served.Partial || served.Walk != 0:
		return fmt.Errorf("namespaces walked (mask %b): %v", served.Walk, served.WalkWhy)
	}
	for b, ns := range served.Results {
		if !ns.Indexed || ns.IndexAge != 0 {
			return fmt.Errorf("namespace %d: indexed %v, index age %v", b, ns.Indexed, ns.IndexAge)
		}
	}
	return nil
}

// scrapeable is a node or a cluster index: what a Scanner scrapes.
type scrapeable interface {
	Collect(ctx context.Context) Serve
}

// scrapeIndex is one scrape of ix (a node or a cluster index), which must be served from its
// index whole.
func scrapeIndex(t *testing.T, ix scrapeable) Serve {
	t.Helper()
	served := ix.Collect(context.Background())
	if err := servedFromIndex(served); err != nil {
		t.Fatal(err)
	}
	return served
}

// servedDifferences scrapes ix, then walks c afresh, and lists each namespace's count (keys,
// keys without a TTL, fence keys) the two read differently, and a minimum TTL the walk, which
// reads later, finds longer than the index's or shorter by more than the time between.
func servedDifferences(t *testing.T, ix scrapeable, c redis.UniversalClient, o Options) []string {
	t.Helper()
	start := time.Now()
	served := scrapeIndex(t, ix)
	w := walk.NewWalker(context.Background(), c, o.Scrape)
	defer w.Close()
	fresh := w.Scan(context.Background())
	if !fresh.Up {
		t.Fatalf("walk: %v", fresh.Err)
	}
	slack := time.Since(start) + 5*time.Millisecond
	var diffs []string
	for b, want := range fresh.Namespaces {
		got := served.Results[b].NamespaceResult
		name := want.Namespace.Name
		if got.Keys != want.Keys || got.KeysWithoutTTL != want.KeysWithoutTTL || got.FenceKeys != want.FenceKeys {
			diffs = append(diffs, fmt.Sprintf("%s: keys/noTTL/fence %d/%d/%d, walk %d/%d/%d", name,
				got.Keys, got.KeysWithoutTTL, got.FenceKeys, want.Keys, want.KeysWithoutTTL, want.FenceKeys))
		}
		if got.HasTTL != want.HasTTL || (got.HasTTL && (want.MinTTL > got.MinTTL+2*time.Millisecond || got.MinTTL-want.MinTTL > slack)) {
			diffs = append(diffs, fmt.Sprintf("%s: min TTL %v (%v), walk %v (%v)", name, got.MinTTL, got.HasTTL, want.MinTTL, want.HasTTL))
		}
	}
	return diffs
}

// matchesWalk fails the test on every difference servedDifferences finds after step.
func matchesWalk(t *testing.T, ix scrapeable, c redis.UniversalClient, o Options, step string) {
	t.Helper()
	for _, d := range servedDifferences(t, ix, c, o) {
		t.Errorf("after %s: %s", step, d)
	}
}
