package walk

import "strings"

// LockOrCompanionMatch returns the SCAN MATCH glob of the walk for namespaces whose patterns all
// start with prefix. The walk must return the keys that start with prefix and their companion
// keys: the fence and holder keys of lock "jobs:1" are "{jobs:1}:fence" and "{jobs:1}:holder"
// (internal/lockkeys), which start with "{" + prefix. A companion's other shape, "L:fence" for a
// lock L with a hash tag, starts with L, so with prefix itself.
//
// "*prefix*" would return both, but its leading '*' makes the server try the rest of the glob at
// every byte of every key in the database, and on a big shared Redis that made the walk cost more
// Redis CPU than redis_exporter's --count-keys (docs/performance-exporter.md). Two passes,
// "prefix*" and "{prefix*", would each walk every bucket. This glob is one pass that fails on the
// first or second byte of an unrelated key, as "prefix*" does: byte i is prefix[i] (the lock)
// or the byte before it, '{' at i = 0 (the companion, shifted one to the right by its brace),
// and the rest is free. It matches a few keys of neither shape ("{obs:…" for "jobs:"), which
// the classifier drops on the exporter's side as it drops every key no namespace matches.
func LockOrCompanionMatch(prefix string) string {
	var b strings.Builder
	b.Grow(4*len(prefix) + 1)
	prev := byte('{')
	for i := range len(prefix) {
		cur := prefix[i]
		if cur == prev {
			writeGlobLiteral(&b, cur)
		} else {
			b.WriteByte('[')
			writeGlobLiteral(&b, cur)
			writeGlobLiteral(&b, prev)
			b.WriteByte(']')
		}
		prev = cur
	}
	b.WriteByte('*')
	return b.String()
}

// writeGlobLiteral writes c so that the server's matcher reads the byte itself, in a set or out
// of one: a backslash makes any byte literal in both places, so every byte that is special in
// either ('^' and '-' in a set, ']' closing it) gets one.
func writeGlobLiteral(b *strings.Builder, c byte) {
	if strings.IndexByte(`*?[]\^-`, c) >= 0 {
		b.WriteByte('\\')
	}
	b.WriteByte(c)
}
