package collectors

import "strings"

// Suffixes of the lease library's companion keys (lease.FenceKey, lease.WriteFenceKey,
// lease.HolderKey).
const (
	fenceSuffix      = ":fence"
	writeFenceSuffix = ":writefence"
	holderSuffix     = ":holder"
)

// companionKind says which of the lease library's companion keys a key is, if any.
type companionKind uint8

const (
	notCompanion companionKind = iota
	fenceCompanion
	holderCompanion
)

// companionOf reports whether key is a key that lease.FenceKey, lease.WriteFenceKey or
// lease.HolderKey can produce, and nothing else: "L:fence" where L has a hash tag, or "{L}:fence"
// where L has none (likewise ":writefence" and ":holder"). A lock named "w:deploy:fence" or
// "w:deploy:holder" has neither shape and is a lock. The shape is mirrored rather than imported
// so that the exporter does not link the lease library; TestCompanionShapeMatchesLease checks it
// against lease's own functions.
func companionOf(key string) companionKind {
	for _, c := range []struct {
		suffix string
		kind   companionKind
	}{{fenceSuffix, fenceCompanion}, {writeFenceSuffix, fenceCompanion}, {holderSuffix, holderCompanion}} {
		if base, ok := strings.CutSuffix(key, c.suffix); ok && companionBase(base) {
			return c.kind
		}
	}
	return notCompanion
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

// holderKeyOf is lease.HolderKey(lockKey), and ok false for a key lease refuses to record a
// holder for (a '}' without a valid hash tag: its holder key could not share the lock's slot).
func holderKeyOf(lockKey string) (key string, ok bool) {
	if hasHashTag(lockKey) {
		return lockKey + holderSuffix, true
	}
	if strings.IndexByte(lockKey, '}') >= 0 {
		return "", false
	}
	return "{" + lockKey + "}" + holderSuffix, true
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
