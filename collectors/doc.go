// Package collectors reads live lock keys from Redis and turns them into Prometheus metrics.
//
// A [Scanner] walks every configured lock namespace with SCAN MATCH/COUNT and, for the keys found,
// pipelines PTTL and OBJECT IDLETIME in batches. It never runs KEYS, never runs a Lua loop on the
// server, and never GETs a lock key: GET would reset the key's idle time and read the owner's token.
// On Redis Cluster every master is scanned concurrently and the results are merged.
//
// Aggregation streams: a scan keeps counters, a minimum, a maximum and a bounded heap of the K
// stalest keys per namespace, never the list of keys. What it holds is the keys in flight: on
// each node, each namespace has up to about seven batches of BatchSize keys at once (the SCAN
// reply being cut into batches, inspectWorkers batches queued and inspectWorkers being
// inspected), and each inspect worker keeps its BatchSize-long command and result slices for
// reuse. Memory is therefore O(namespaces × nodes × BatchSize + namespaces × K), whatever the
// number of keys; MaxBatchSize and MaxTopK bound both terms.
// SCAN may return a key more than once (when the server resizes its hash table mid-scan); the
// scanner does not keep a set of every key seen to filter those repeats, because that set would
// be O(keys). Counts can therefore overstate by the few keys that were returned twice during a
// resize; minimum TTL and maximum idle time are unaffected, and the top-K list is de-duplicated
// exactly.
//
// Keys ending in ":fence" or ":writefence" are the lease library's counters (lease.FenceKey,
// lease.WriteFenceKey), not locks, and are skipped even when a namespace pattern matches them.
//
// The metrics are built fresh on every scrape (node_exporter style): [Scanner.Collector] returns a
// prometheus.Collector bound to one scrape's context, made of one small collector per concern
// (key counts and TTL, idle time, scrape meta-metrics, declared expectations). Concurrent scrapes
// share the scan in flight instead of each starting its own.
package collectors
