package lease

import "strings"

// FenceKey returns the key that holds lockKey's last fence (an integer string: the server time
// in microseconds of the last fenced acquisition, or above it), expiring TTL +
// Policy.FenceRetention after that acquisition. It always hashes to lockKey's Redis Cluster slot, so the lock and
// its fence can be taken in one script: a lockKey with a valid hash tag keeps it
// ("{job}:42" → "{job}:42:fence"); any other key becomes the tag ("job:42" → "{job:42}:fence").
//
// A key that contains '}' but no valid hash tag cannot be wrapped into a tag of itself;
// fenced operations reject such keys with ErrInvalidKey.
func FenceKey(lockKey string) string {
	return companionKey(lockKey, ":fence")
}

// WriteFenceKey returns the key where FencedSet records the fence of the last write it applied
// to dataKey. It shares dataKey's cluster slot by the same rule as FenceKey.
func WriteFenceKey(dataKey string) string {
	return companionKey(dataKey, ":writefence")
}

func companionKey(key, suffix string) string {
	if hasHashTag(key) {
		return key + suffix
	}
	return "{" + key + "}" + suffix
}

// hasHashTag reports whether Redis Cluster hashes key by a tag: the bytes between the first '{'
// and the first '}' after it, when there is at least one.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	closing := strings.IndexByte(key[open+1:], '}')
	return closing > 0
}

// sameSlotCompanion reports whether companionKey(key, …) hashes to key's slot: true unless a
// '}' without a valid tag would cut the wrapping tag short.
func sameSlotCompanion(key string) bool {
	return hasHashTag(key) || strings.IndexByte(key, '}') < 0
}

// fenceKeyExpiry is the fence key's PX in ms: TTL + FenceRetention.
func (n *Namespace) fenceKeyExpiry() int64 {
	return (n.policy.TTL + n.policy.FenceRetention).Milliseconds()
}
