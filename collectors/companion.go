package collectors

import "strings"

// Suffixes of the lease library's companion keys (lease.FenceKey, lease.WriteFenceKey).
const (
	fenceSuffix      = ":fence"
	writeFenceSuffix = ":writefence"
)

// isCompanionKey reports whether key is a key that lease.FenceKey or lease.WriteFenceKey can
// produce, and nothing else: "L:fence" where L has a hash tag, or "{L}:fence" where L has none
// (likewise ":writefence"). A lock named "w:deploy:fence" has neither shape and is a lock. The
// shape is mirrored rather than imported so that the exporter does not link the lease library;
// TestCompanionShapeMatchesLease checks it against lease's own functions.
func isCompanionKey(key string) bool {
	for _, suffix := range []string{fenceSuffix, writeFenceSuffix} {
		if base, ok := strings.CutSuffix(key, suffix); ok && companionBase(base) {
			return true
		}
	}
	return false
}

// companionBase reports whether base is what lease puts before the suffix: a lock key that
// keeps its own hash tag, or "{" + a key without one + "}".
func companionBase(base string) bool {
	if hasHashTag(base) {
		return true
	}
	inner, ok := strings.CutPrefix(base, "{")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, "}")
	return ok && !hasHashTag(inner)
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: the bytes between the first '{'
// and the first '}' after it, when there is at least one (lease's rule, and the server's).
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	return strings.IndexByte(key[open+1:], '}') > 0
}
