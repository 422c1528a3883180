package index

import (
	"slices"
	"strings"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// TrackingPrefixes returns the PREFIX arguments of CLIENT TRACKING ... BCAST for the given
// namespace patterns: each pattern's literal prefix (every key the pattern matches starts with
// it), with any prefix that another one starts with dropped, since Redis refuses overlapping
// prefixes and the shorter one already covers the longer. ok is false when a pattern has no
// literal prefix: a prefix of "" would be told about every key, which is no cheaper than a walk.
//
// The lease library's companion keys count under their lock's namespace, as the walk classifies
// them: the fence key of "jobs:1" is "{jobs:1}:fence", so each prefix is tracked with "{" before
// it too; so is a prefix that starts with "{" itself, whose locks without a hash tag ("{jobs:1")
// have companions such as "{{jobs:1}:fence", as the walk's MATCH finds them
// (walk.LockOrCompanionMatch).
func TrackingPrefixes(patterns []string) (prefixes []string, ok bool) {
	for _, p := range patterns {
		lit := walk.LiteralPrefix(p)
		if lit == "" {
			return nil, false
		}
		prefixes = append(prefixes, lit, "{"+lit)
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	merged := prefixes[:0]
	for _, p := range prefixes {
		// Sorted, a prefix comes right after any shorter prefix of it, or after keys that start
		// with that shorter prefix; so comparing with the last kept one suffices.
		if len(merged) > 0 && strings.HasPrefix(p, merged[len(merged)-1]) {
			continue
		}
		merged = append(merged, p)
	}
	return merged, true
}
