// Package index holds the parts of the exporter's lock-key index that stand on their own: the
// change feed (a ChangeFeed, from RESP3 client tracking or keyspace notifications, that names
// every key written under the tracked prefixes, and the resync reasons it and the index give),
// the ServerClock the index keeps its times on, the KeyIndex (one node's indexed keys as last
// read, the replies of the walk's inspector applied to it, and its aggregation per namespace:
// counts, minimum TTL, top-K candidates, hold ages), the entry kept for every indexed key, the
// key store that maps key names to entries in a few large allocations, the prefixes the change
// feed follows, the reading of INFO commandstats that tells a SWAPDB or a flush the feed does
// not report, the ServerIdentity that tells the server behind an address was replaced, demoted
// or lost slots, the KeyBudget that bounds the keys every node's index holds together, and the
// ServedNamespace an index serves a scrape (a walk's figures with the index's age, and a
// cluster's merge of two masters' figures). It builds on the walk's package
// (its namespaces, key replies and top-K lists); the index's nodes that use these parts are in
// collectors.
package index
