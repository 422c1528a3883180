// Package index holds the parts of the exporter's lock-key index that stand on their own: the
// change feed (a ChangeFeed, from RESP3 client tracking or keyspace notifications, that names
// every key written under the tracked prefixes, and the resync reasons it and the index give)
// and the FeedKind a node opens, the ServerClock the index keeps its times on, the KeyIndex (one
// node's indexed keys as last read, the replies of the walk's inspector applied to it, and its
// aggregation per namespace: counts, minimum TTL, top-K candidates, hold ages), the entry kept
// for every indexed key, the key store that maps key names to entries in a few large
// allocations, the Builder that fills a KeyIndex from a build's walk (or rebuilds the served one
// in place, within the key budget), the prefixes the change feed follows, the reading of INFO
// commandstats that tells a SWAPDB or a flush the feed does not report, the ServerIdentity that
// tells the server behind an address was replaced, demoted or lost slots, the KeyBudget that
// bounds the keys every node's index holds together, and what an index answers a scrape: a
// Serve (each namespace's ServedNamespace, a walk's figures with the index's age, made from the
// KeyIndex's aggregate by IndexedResult; the namespaces handed to the walk, with the reason
// label values Why*; the first build's walk while it runs), the Counts beside it, the merge of a
// cluster's masters' answers (MergeServes) and the MasterWalkers that walk the masters that
// cannot serve one. It builds on the walk's package (its namespaces, key replies, results and
// top-K lists); the index's nodes that use these parts, and the indexer that turns a Serve into
// the exporter's results, are in collectors.
package index
