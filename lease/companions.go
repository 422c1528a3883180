package lease

import (
	"fmt"
	"strings"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// companionClash says why key would break the rule that keeps companion keys (fence, holder and
// write-fence keys) to their own key: no key may equal another key's companion, and no two keys
// may have the same companions. It returns "" when key keeps the rule. withCompanions says
// whether key gets companions of its own (a lock of a namespace that fences or records holders,
// a data key with a write-fence record).
//
// Refusing these shapes, rather than renaming the companions, keeps every companion key where
// earlier versions wrote it: processes of two versions agree on one lock's fence key during a
// rolling upgrade, and the exporter keeps recognising companions as it does. A renamed
// companion could not escape the first half of the rule anyway, since a lock key may be any
// string.
func companionClash(key string, withCompanions bool) string {
	if lockkeys.KindOf(key) != lockkeys.NotCompanion {
		return "has the shape of a fence, write-fence or holder key, which the library writes beside another key; choose a name that does not end so"
	}
	if withCompanions && lockkeys.SharesCompanions(key) {
		inner := strings.TrimSuffix(strings.TrimPrefix(key, "{"), "}")
		return fmt.Sprintf("is a hash tag alone: its companion keys (%q and the like) would be those of %q; add a name after the tag (%q)",
			lockkeys.Fence(key), inner, key+":name")
	}
	return ""
}
