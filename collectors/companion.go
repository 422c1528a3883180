package collectors

import "github.com/lockwatch/lockwatch/internal/lockkeys"

// The lease library's companion keys (fence, write-fence and holder keys) are told apart from
// locks by their exact shape, defined once in internal/lockkeys: the exporter shares that
// definition with the lease library without linking it.

// companionKind says which of the lease library's companion keys a key is, if any.
type companionKind = lockkeys.Kind

const (
	notCompanion    = lockkeys.NotCompanion
	fenceCompanion  = lockkeys.FenceCompanion
	holderCompanion = lockkeys.HolderCompanion
)

// companionOf reports which companion key the lease library could have written as key. A lock
// named "w:deploy:fence" has no companion's shape and is a lock.
func companionOf(key string) companionKind { return lockkeys.KindOf(key) }

// isCompanionKey reports whether key is any of the lease library's companion keys.
func isCompanionKey(key string) bool { return companionOf(key) != notCompanion }

// holderKeyOf is lockKey's holder key, and ok false for a key lease refuses to record a holder
// for (a '}' without a valid hash tag: its holder key could not share the lock's slot).
func holderKeyOf(lockKey string) (key string, ok bool) {
	if !lockkeys.SameSlot(lockKey) {
		return "", false
	}
	return lockkeys.Holder(lockKey), true
}
