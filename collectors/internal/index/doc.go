// Package index holds the parts of the exporter's lock-key index that stand on their own: the
// key store that maps every indexed key name to its entry in a few large allocations, and the
// prefixes the change feed follows.
package index
