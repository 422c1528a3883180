package observe

import (
	"strings"

	"github.com/lockwatch/lockwatch/internal/glob"
)

// keyMatcher is a namespace's pattern read once, when the Observer is built: every lock
// command's key is matched against it. Most patterns are a literal with `*` at one end or
// both (jobs:*, *jobs:*), which one string comparison decides; the rest go through the
// glob matcher. Either way the answer is glob.ScanMatch's.
type keyMatcher struct {
	kind    matchKind
	lit     string // the pattern without its `*` ends
	pattern string
}

type matchKind uint8

const (
	matchGlob     matchKind = iota // anything else: glob.ScanMatch
	matchAny                       // "*": SCAN's no-pattern, which matches the empty key too
	matchExact                     // lit
	matchPrefix                    // lit*
	matchSuffix                    // *lit
	matchContains                  // *lit*
)

func newKeyMatcher(pattern string) keyMatcher {
	m := keyMatcher{pattern: pattern}
	if pattern == "*" {
		m.kind = matchAny
		return m
	}
	lit := pattern
	leading := strings.HasPrefix(lit, "*")
	if leading {
		lit = lit[1:]
	}
	trailing := strings.HasSuffix(lit, "*")
	if trailing {
		lit = lit[:len(lit)-1]
	}
	if lit == "" || strings.ContainsAny(lit, `*?[\`) {
		return m // runs of stars, sets, escapes: the matcher's own rules
	}
	m.lit = lit
	switch {
	case leading && trailing:
		m.kind = matchContains
	case leading:
		m.kind = matchSuffix
	case trailing:
		m.kind = matchPrefix
	default:
		m.kind = matchExact
	}
	return m
}

func (m *keyMatcher) match(key string) bool {
	switch m.kind {
	case matchAny:
		return true
	case matchExact:
		return key == m.lit
	case matchPrefix:
		return strings.HasPrefix(key, m.lit)
	case matchSuffix:
		return strings.HasSuffix(key, m.lit)
	case matchContains:
		return strings.Contains(key, m.lit)
	}
	return glob.ScanMatch(m.pattern, key)
}
