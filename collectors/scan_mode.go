package collectors

import (
	"fmt"
	"strings"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
)

// ScanMode says how a Scanner reads its namespaces.
type ScanMode string

const (
	// ModeAuto keeps an index of the lock keys current from Redis's change feed (RESP3 client
	// tracking) for every namespace whose pattern has a literal prefix, so that a scrape costs
	// Redis what changed since the last one instead of a walk of the keyspace; any namespace or
	// server the feed cannot serve is walked on every scrape, as in ModeWalk.
	ModeAuto ScanMode = "auto"
	// ModeWalk walks the keyspace (one SCAN walk per node) on every scrape.
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

// DefaultIndexKeyBudget is the most keys the index holds, every namespace together (keyBudget):
// past it the largest namespace goes back to the walk, whose memory does not grow with the
// keys. An indexed key costs about 86 bytes of live heap with a 16-byte name (16 of them the
// lock lifecycle's hold state), plus its name's extra bytes, and the lifecycle
// remembers at most an eighth as many recently ended keys at about 56 bytes each (index.KeyStore,
// lifecycle; measured in docs/exporter.md, "Cost"). The manifests give the exporter
// 128 MiB with GOMEMLIMIT=100MiB, under which 1M keys (about 70 MB live) ran at 120 MiB peak
// RSS, a resync included: too near the limit to be the bound. Of the 100 MiB Go may use, the
// HTTP caps take 12 MiB and the walks' own buffers a few: 500k keys (43 MB with 16-byte names,
// and at most 3.5 MB of recent ends) leave room for a resync that holds many keys twice, or for
// names up to about 60 bytes.
const DefaultIndexKeyBudget = 500_000

// The mode label values of lock_exporter_scan_mode.
const (
	modeIndex = "index"
	modeWalk  = "walk"
)

// Reasons a namespace is walked rather than indexed: the reason label of lock_exporter_scan_mode
// and the words of the start-up log line.
const (
	reasonIndexed          = ""
	reasonWalkConfigured   = "walk_configured"
	reasonNoLiteralPrefix  = "no_literal_prefix"
	reasonTooManyIndexed   = "index_namespace_limit"
	reasonTrackingRefused  = index.WhyTrackingRefused
	reasonKeyBudget        = index.WhyKeyBudget
	reasonIndexUnavailable = index.WhyIndexUnavailable
	reasonResyncing        = index.WhyResyncing
)

// reasonText is the start-up log line's explanation of each reason.
var reasonText = map[string]string{
	reasonWalkConfigured:   "--scan.mode=walk",
	reasonNoLiteralPrefix:  "pattern has no literal prefix",
	reasonTooManyIndexed:   fmt.Sprintf("more than %d namespaces are indexed", index.MaxNamespaces),
	reasonTrackingRefused:  index.TrackingRefusedText,
	reasonKeyBudget:        index.KeyBudgetText,
	reasonIndexUnavailable: "no current lock-key index (no build has succeeded yet, the last one failed and is retried, or the Redis client is neither a single-node, Sentinel nor Cluster client)",
	reasonResyncing:        "the index is being rebuilt after its data changed without a feed message",
}
