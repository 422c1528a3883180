// Package walk is the exporter's walk: its full read of the keyspace. A Walker runs one walk
// (a Run) at a time, shared by the scrapes that overlap it: on each node a single SCAN cursor
// whose keys are sorted into namespaces on the exporter's side (the Classifier, with SCAN
// MATCH's glob and a pattern's literal prefix), the lock keys inspected by pipelined PTTL,
// OBJECT IDLETIME and TYPE (an Inspector, which the index's re-reads use too), counted and
// ranked per namespace (TopK lists of KeyInfo), and the holder keys of the listed locks read.
// It reads its own Options and returns its own Result, by namespace in Options order; the
// collectors package turns that into its public result. A KeySink set on a Run receives every
// key the walk reads: the lock-key index's builds and backstop walks are walks with a sink.
// Beside those: the node client, when each node last answered, which nodes accept
// SCAN ... TYPE, the key label, and the list of a cluster's masters.
package walk
