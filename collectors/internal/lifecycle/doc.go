// Package lifecycle derives lock lifecycles (acquisitions, ends by reason, takeovers, renewals,
// hold durations) from what the exporter's change feed tells of one key at a time: a re-read
// after a client-tracking invalidation (Observe), the ordered keyspace events of a key
// (ApplyEvents), and the passing of a key's known expiry (Sweep).
//
// The package holds no Redis client and no key index. A key's state between two inputs is a
// Hold value that the caller keeps beside its own entry for the key (the index stores it in a
// few bytes), passes in and stores back; the Tracker keeps what outlives a key: the counters per
// namespace and, for the takeover window, when recently ended keys ended.
//
// Each input source (a node's change feed) counts into a Source, whose counts reach the
// counters when it commits them, once it knows its readings were of the data it follows: a
// SWAPDB, which no feed reports, is seen only by a later check, and the counts read meanwhile
// are discarded.
//
// Namespaces are bits of a mask (bit b is the caller's indexed namespace b, at most 64). Every
// call counts for the namespaces of the mask it is given: the caller passes 0 (nothing counted,
// state still kept) while it does not follow the key's changes, so that a build or a resync
// never counts the keys it finds.
//
// The rules only undercount: when two readings cannot tell what happened between them, the
// tracker counts the least that explains them.
package lifecycle
