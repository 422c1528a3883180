// Package collectors reads live lock keys from Redis and turns them into Prometheus metrics.
//
// A [Scanner] makes one walk over each node's keyspace per scrape: a single SCAN cursor whose
// keys are sorted into the configured namespaces on the exporter's side, with the semantics of
// the server's own SCAN MATCH (checked against redis-server by this repository's tests). Only keys some namespace wants are inspected, by
// pipelined PTTL and OBJECT IDLETIME (and TYPE, unless the server filtered by type). So Redis
// does the work of one SCAN walk of the keyspace, whatever the number of namespaces, plus two or
// three cheap commands per lock key. What the server can filter, it does: with every namespace
// counting strings only, SCAN ... TYPE string (Redis 6 and later; a server that refuses it is
// remembered and gets TYPE per key); with every pattern sharing a literal prefix, MATCH *prefix*
// (the leading star lets the fence keys "{prefix…}:fence" through).
// It never runs KEYS, never runs a Lua loop on the server, and never GETs a lock key: GET would
// reset the key's idle time and read the owner's token. On Redis Cluster every master is scanned
// concurrently and the results are merged.
//
// Aggregation streams: a scan keeps counters, a minimum, a maximum and two bounded heaps (the K
// stalest keys, and the K stalest keys without expiry) per namespace, never the list of keys;
// a kept key holds at most 128 bytes of its name. What it holds besides is the keys in
// flight: per node, the SCAN reply being classified and up to 2 × inspectWorkers + 1 batches of
// BatchSize keys. Memory is therefore O(nodes × BatchSize + namespaces × K), whatever the number
// of keys; MaxBatchSize and MaxTopK bound both terms.
// SCAN may return a key more than once (when the server resizes its hash table mid-scan); the
// scanner does not keep a set of every key seen to filter those repeats, because that set would
// be O(keys). Counts can therefore overstate by the few keys that were returned twice during a
// resize; minimum TTL and maximum idle time are unaffected, and the top-K lists are de-duplicated.
//
// Keys shaped exactly as the lease library's fence and write-fence keys ("{L}:fence" for lock
// key L, "{D}:writefence" for data key D, the hash tag kept when the key has one;
// docs/lease.md#fencing) are not locks: they are counted apart (lock_fence_keys) and not
// inspected.
//
// Deadlines: a walk stops sending commands at its deadline by itself; the socket gets a second
// more, so that a reply in flight is not turned into an i/o timeout that would look like a
// failing Redis. A walk cut by its deadline reports what it saw (a lower bound) with
// lock_exporter_scrape_complete 0 and lock_exporter_up 1. Concurrent scrapes share the walk in
// flight, which runs until the latest of their deadlines.
//
// With Options.Mode ModeAuto (lock-exporter's default) a namespace whose pattern has a literal
// prefix is served instead from a lock-key index (internal/index, started by index_scan.go): a
// build fills it with one walk, the change feed names every key that changes under the
// prefixes, and each named key is re-read with the walk's own inspector. A scrape drains that
// feed first, so its figures are as of the scrape, like a walk's; anything the feed cannot vouch
// for (a dropped connection, a flush, a restart, a failover, SWAPDB) is a resync, and a paced
// backstop walk corrects and counts what it might still have missed.
// Namespaces and servers the feed cannot serve are walked (scan_mode.go says when and why).
//
// The metrics are built fresh on every scrape (node_exporter style): [Scanner.Collector] returns a
// prometheus.Collector bound to one scrape's context, made of one small collector per concern
// (scrape meta-metrics, key counts and TTL, idle time, holders, declared expectations: the
// metrics_*.go files).
//
// # Layout
//
// The engine's parts point one way, down: the Scanner and the exposition (scanner.go,
// collector.go, metrics_*.go) use the indexer (index_scan.go), which starts the index and turns
// its answers into a [Result]; it and the walk's adapters use the rooms under internal/, which
// use none of this package. What the index reads of [Options] is made once in index_settings.go
// (indexOptionsOf, and the lifecycle tracker), so the index reads options of its own; it answers
// a scrape in internal/index's types (a Serve, the index Counts), which the indexer turns into a
// [Result] in one place (mergeServed and publicServed, beside publicResult), and the reasons it
// gives for a namespace walked are internal/index's (the same label values), which scan_mode.go
// names.
// internal/walk is the walk: the walker and its walks in flight, each node's SCAN loop, the
// inspection of keys, the per-namespace aggregates and top-K lists, the holder reads, and the
// parts those stand on (the namespace classifier, the node client, the reply clock, SCAN's glob
// and TYPE filter, the key label). It reads options of its own, built once from [Options], and
// returns a result of its own, which scan_result.go turns into a [Result] in one place
// (publicResult), the top-K lists converted to [KeyInfo] there, so no internal type is API.
// internal/index is the lock-key index: a node's index of one server (its feed loop, builds
// and resyncs, re-reads, scrape, identity checks, lifecycle counts and backstop walk), the
// cluster index over one node per master, and the parts they stand on (the change feed, the key
// index and its store, the builder, the key budget, what an index serves a scrape and the merge
// of the masters' answers); it uses internal/walk for every read of the keyspace.
// internal/keyspace and internal/lifecycle hold the notifications feed's subscription and the
// lock lifecycle. Options, Namespace and the result types are the
// vocabulary of this package.
//
// # Words
//
// One word per concept, here, in the internal packages and in docs/exporter.md:
//   - scan: one [Scanner.Scan], a scrape's read of every namespace, each served by the index or
//     by a walk.
//   - walk: the full read of the keyspace: SCAN on every node, the keys sorted into namespaces,
//     the lock keys inspected, counted and ranked. A walk in flight (a run) is shared by the
//     scrapes that overlap it. The backstop walk is a paced walk that checks the index.
//   - index: the indexed namespaces' lock keys held in memory, kept current by the feed.
//   - build: filling an index with one walk, at start and again after each resync.
//   - resync: the event that the index must be built again, because the feed cannot vouch for
//     it; lock_exporter_index_resyncs_total counts them by reason.
//   - feed: the change feed, the names of the keys that changed, from one of its two sources:
//     client tracking or keyspace notifications. A named key is re-read.
//   - top-K list: the K keys first by one order (the stalest, the stalest without expiry, the
//     soonest to expire, the longest held); [Options].TopK is K.
//   - namespace: a [Namespace] is a family of lock keys, named and matched by a pattern
//     (observe.Namespace declares the same two fields for the library side); lease.Namespace is
//     something else, the handle that takes leases under one policy.
package collectors
