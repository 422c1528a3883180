// Package walk is the exporter's full read of the keyspace: one SCAN walk per node, the keys
// sorted into namespaces on the exporter's side, the lock keys inspected, and per namespace the
// counts and the stalest-K rankings a scrape reports. The lock-key index builds on it.
package walk
