// Package index holds the parts of the exporter's lock-key index that stand on their own: the
// key store that maps every indexed key name to its entry in a few large allocations, the
// prefixes the change feed follows, and the reading of INFO commandstats that tells a SWAPDB or
// a flush the feed does not report.
package index
