// Package lockkeys is the one definition of the lease library's companion keys: the fence key
// and the holder key of a lock key, and the write-fence key of a data key. The lease library
// writes them; the exporter reads them and tells them apart from locks without linking the
// lease library.
//
// Every companion key hashes to its key's Redis Cluster slot, so a script can touch both: a key
// with a valid hash tag keeps it ("{job}:42" → "{job}:42:fence"), any other key becomes the tag
// ("job:42" → "{job:42}:fence"). A key that contains '}' but no valid hash tag cannot be
// wrapped into a tag of itself (see SameSlot); the lease library refuses such keys where it
// needs a companion.
package lockkeys

import "strings"

// Suffixes of the companion keys.
const (
	fenceSuffix      = ":fence"
	writeFenceSuffix = ":writefence"
	holderSuffix     = ":holder"
)

// Fence returns the key that holds lockKey's last fence token: an integer string, the server
// time in microseconds of the last fenced acquisition or above it.
func Fence(lockKey string) string { return companion(lockKey, fenceSuffix) }

// WriteFence returns the key where the lease library's fenced-write guard records the fence of
// the last write it applied to dataKey.
func WriteFence(dataKey string) string { return companion(dataKey, writeFenceSuffix) }

// Holder returns the key where the lease library records who holds lockKey (a description of
// the process, never the token).
func Holder(lockKey string) string { return companion(lockKey, holderSuffix) }

func companion(key, suffix string) string {
	if hasHashTag(key) {
		return key + suffix
	}
	return "{" + key + "}" + suffix
}

// SameSlot reports whether key's companion keys hash to key's cluster slot: true unless a '}'
// without a valid hash tag would cut the wrapping tag short.
func SameSlot(key string) bool {
	return hasHashTag(key) || strings.IndexByte(key, '}') < 0
}

// SlotTag returns the part of key that Redis Cluster hashes: its hash tag when it has one, else
// the whole key. Two keys with equal SlotTags share a slot on every cluster, so a script may
// touch both; lockKey's companions have lockKey's SlotTag whenever SameSlot(lockKey).
func SlotTag(key string) string {
	if !hasHashTag(key) {
		return key
	}
	open := strings.IndexByte(key, '{')
	return key[open+1 : open+1+strings.IndexByte(key[open+1:], '}')]
}

// Kind says which companion key a key is, if any.
type Kind uint8

const (
	NotCompanion    Kind = iota
	FenceCompanion       // a fence key or a write-fence key
	HolderCompanion      // a holder key
)

// KindOf reports which companion key Fence, WriteFence or Holder could have produced key, and
// nothing else: "L:fence" where L has a hash tag, or "{L}:fence" where L has none (likewise
// ":writefence" and ":holder"). A lock named "w:deploy:fence" has neither shape and is a lock.
func KindOf(key string) Kind {
	for _, c := range []struct {
		suffix string
		kind   Kind
	}{{fenceSuffix, FenceCompanion}, {writeFenceSuffix, FenceCompanion}, {holderSuffix, HolderCompanion}} {
		if base, ok := strings.CutSuffix(key, c.suffix); ok && companionBase(base) {
			return c.kind
		}
	}
	return NotCompanion
}

// LockOf is KindOf that also names the lock a companion key belongs to. A companion key can have
// two possible locks: "{a}:fence" is the fence key of lock "{a}" (which keeps its own hash tag)
// and of lock "a" (which companion wrapped in braces). base is the first (key without its
// suffix, "" when that has no hash tag), unwrapped the second ("" when the key without its suffix
// is not "{…}" around a key without a hash tag). Both are "" for a key that is no companion.
func LockOf(key string) (kind Kind, base, unwrapped string) {
	kind = KindOf(key)
	if kind == NotCompanion {
		return kind, "", ""
	}
	prefix := key[:strings.LastIndexByte(key, ':')]
	if hasHashTag(prefix) {
		base = prefix
	}
	if inner, ok := strings.CutPrefix(prefix, "{"); ok {
		if inner, ok = strings.CutSuffix(inner, "}"); ok && !hasHashTag(inner) {
			unwrapped = inner
		}
	}
	return kind, base, unwrapped
}

// companionBase reports whether base is what companion puts before the suffix: a key that keeps
// its own hash tag, or "{" + a key without one + "}".
func companionBase(base string) bool {
	return hasHashTag(base) || SharesCompanions(base)
}

// SharesCompanions reports whether key has the companion keys of another key: "{L}", L a key
// without a hash tag, keeps its tag and so gets "{L}:fence", which is also what L, wrapped into
// a tag, gets. Where keys get companions, one of the two must be refused; the lease library
// refuses "{L}".
func SharesCompanions(key string) bool {
	inner, ok := strings.CutPrefix(key, "{")
	if !ok {
		return false
	}
	inner, ok = strings.CutSuffix(inner, "}")
	return ok && !hasHashTag(inner)
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: the bytes between the first '{'
// and the first '}' after it, when there is at least one.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	return strings.IndexByte(key[open+1:], '}') > 0
}
