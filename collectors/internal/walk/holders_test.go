package walk

import (
	"testing"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

// TestHolderKeyOfMatchesLease checks HolderKeyOf against lockkeys.Holder, and that it declines
// exactly the keys whose holder key would not share the lock's cluster slot (lease refuses to
// record a holder for those).
func TestHolderKeyOfMatchesLease(t *testing.T) {
	for _, lock := range []string{"jobs:1", "{jobs}:1", "cordum:wf:run:lock:abc", "", "{", "}{x}", "x{y}z", "w:deploy:holder"} {
		got, ok := HolderKeyOf(lock)
		if !ok || got != lockkeys.Holder(lock) {
			t.Errorf("HolderKeyOf(%q) = %q, %v; want %q, true", lock, got, ok, lockkeys.Holder(lock))
		}
	}
	for _, lock := range []string{"}", "a}b", "{}"} {
		if got, ok := HolderKeyOf(lock); ok {
			t.Errorf("HolderKeyOf(%q) = %q, true; want false (no valid tag, and a '}')", lock, got)
		}
	}
}
