package collectors

import (
	"fmt"
	"strings"
)

// ScanMode says how a Scanner reads its namespaces.
type ScanMode string

const (
	// ModeAuto keeps an index of the lock keys current from Redis's change feed (RESP3 client
	// tracking) for every namespace whose pattern has a literal prefix, so that a scrape costs
	// Redis what changed since the last one instead of a walk of the keyspace; any namespace or
	// server the feed cannot serve is walked on every scrape, as in ModeWalk.
	ModeAuto ScanMode = "auto"
	// ModeWalk walks the keyspace (one SCAN pass per node) on every scrape.
	ModeWalk ScanMode = "walk"
)

// ParseScanMode parses the --scan.mode value.
func ParseScanMode(s string) (ScanMode, error) {
	switch m := ScanMode(strings.TrimSpace(s)); m {
	case ModeAuto, ModeWalk:
		return m, nil
	}
	return "", fmt.Errorf("scan mode %q is not %q or %q", s, ModeAuto, ModeWalk)
}

// DefaultIndexKeyBudget is the most keys one namespace may hold in the index before it goes
// back to the walk. An indexed key costs about 112 bytes of live heap and, with Go's default
// GOGC, about 250 bytes of resident memory (measured at 1M keys in docs/exporter.md, "Cost": 243
// MiB), so 250k keys (80 MiB) keep the exporter within the 128 MiB the manifests give it; a
// namespace larger than that is walked, whose memory does not grow with the keys.
const DefaultIndexKeyBudget = 250_000

// Reasons a namespace is walked rather than indexed: the reason label of lock_exporter_scan_mode
// and the words of the start-up log line.
const (
	reasonIndexed          = ""
	reasonWalkConfigured   = "walk_configured"
	reasonNoLiteralPrefix  = "no_literal_prefix"
	reasonTooManyIndexed   = "index_namespace_limit"
	reasonTrackingRefused  = "tracking_refused"
	reasonKeyBudget        = "key_budget"
	reasonIndexUnavailable = "index_unavailable"
	reasonResyncing        = "index_resync"
)

// reasonText is the start-up log line's explanation of each reason.
var reasonText = map[string]string{
	reasonWalkConfigured:   "--scan.mode=walk",
	reasonNoLiteralPrefix:  "pattern has no literal prefix",
	reasonTooManyIndexed:   fmt.Sprintf("more than %d namespaces are indexed", maxIndexedNamespaces),
	reasonTrackingRefused:  "the server refused RESP3 client tracking",
	reasonKeyBudget:        "the namespace holds more keys than the index key budget",
	reasonIndexUnavailable: "no lock-key index yet (its first build has not ended, or the Redis client is neither a single-node, Sentinel nor Cluster client)",
	reasonResyncing:        "the index is being rebuilt after its data changed without a feed message",
}

// maxIndexedNamespaces is how many namespaces one index serves: an indexed key records the
// namespaces it belongs to in one 64-bit mask.
const maxIndexedNamespaces = 64
