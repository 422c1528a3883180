package walk

import "strings"

// LiteralPrefix is the part of a glob before its first special byte. It stops at a backslash
// too, so that the prefix never needs escaping when it is handed back to MATCH.
func LiteralPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// CommonPrefix is the longest prefix a and b share.
func CommonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
