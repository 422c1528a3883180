// Package walk holds the parts of the exporter's walk (its full read of the keyspace: one SCAN
// cursor per node, the keys sorted into namespaces on the exporter's side, the lock keys
// inspected) that stand on their own: the namespace classifier (built from a Namespace per
// configured namespace), the top-K lists of KeyInfo, the node client, when each node last
// answered, which nodes accept SCAN ... TYPE, the SCAN MATCH glob, a pattern's literal prefix,
// the key label, and the list of a cluster's masters. The lock-key index builds on it.
package walk
