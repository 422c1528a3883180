// Package index is the exporter's lock-key index: the indexed namespaces' lock keys of a Redis
// server held in memory and kept current by a change feed, so that a scrape reads what changed
// instead of walking the keyspace.
//
// A Node indexes one server (or the master behind Sentinel). Its feed loop builds the index with
// one walk (the Builder fills a KeyIndex from the walk's replies), then follows the ChangeFeed,
// from RESP3 client tracking or keyspace notifications (FeedKind), which names every key written
// under the tracked prefixes; each named key is re-read with the walk's inspector and applied to
// the KeyIndex, and its lock lifecycle (acquisitions, releases, expiries, takeovers) is counted
// in a lifecycle tracker. Anything the feed cannot vouch for is a resync (the reasons Resync*): a
// lost connection, a flush or SWAPDB the reading of INFO commandstats reveals, a ServerIdentity
// that tells the server behind the address was replaced, demoted or lost slots. A paced backstop
// walk corrects and counts what the feed might still have missed. A scrape drains the feed first
// and is answered with a Serve: each namespace's ServedNamespace (a walk's figures made from the
// KeyIndex's aggregate, with the index's age), the namespaces handed to the walk instead with
// their reason label values (Why*), or the first build's walk while it runs; Counts go beside it.
//
// A Cluster keeps one Node per master of a Redis Cluster, lists the masters from the slot map,
// merges their answers (MergeServes), and walks, with the MasterWalkers, the masters that cannot
// serve a scrape from their index. The KeyBudget bounds the keys every node's index holds
// together; the ServerClock is the clock the index keeps its times on.
//
// What the index reads of the exporter's options is an Options, built once by collectors, and
// what a node is given to run is an Env. The package uses the walk's package for every read of
// the keyspace (its namespaces, inspector, key replies, results and top-K lists) and imports
// nothing of collectors.
package index
