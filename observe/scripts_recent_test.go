package observe

import (
	"strings"
	"testing"
	"unsafe"
)

// A lock script's SHA string is remembered by its address once recognised, so that the same
// string (a library's Script passes one on every call) is recognised again without the map. A
// string built anew each call with the same hash is recognised through the map and adds no
// record, and once the table is full more scripts cost no allocation.
func TestRecentSHAsRememberTheLibrarysString(t *testing.T) {
	tab := newScriptTable()
	const release = "cf0e94b2e9ffc7e04395cf88f7583fc309985910" // bsm/redislock's release
	sha := strings.Clone(release)
	want := knownScripts[release]
	if info, ok := tab.bySHA(sha); !ok || info != want {
		t.Fatalf("bySHA(%s) = %+v, %v; want %+v", sha, info, ok, want)
	}
	if r := tab.recent[0].Load(); r == nil || unsafe.StringData(r.sha) != unsafe.StringData(sha) {
		t.Fatalf("the recognised SHA string is not remembered: %+v", r)
	}
	if n := testing.AllocsPerRun(100, func() {
		if info, ok := tab.bySHA(sha); !ok || info != want {
			t.Fatalf("again: %+v, %v", info, ok)
		}
	}); n != 0 {
		t.Errorf("a remembered SHA: %v allocations, want 0", n)
	}

	// The same hash in new strings: recognised, never remembered a second time.
	for range 3 * recentSHAs {
		if info, ok := tab.bySHA(strings.Clone(release)); !ok || info != want {
			t.Fatalf("a copy: %+v, %v", info, ok)
		}
	}
	if n := tab.next.Load(); n != 1 {
		t.Fatalf("copies of one hash claimed %d slots, want 1", n)
	}

	// More lock scripts than slots: each recognised; the table full, none allocates.
	var shas []string
	for sha := range knownScripts {
		shas = append(shas, strings.Clone(sha))
	}
	if len(shas) <= recentSHAs {
		t.Fatalf("only %d known scripts to fill %d slots", len(shas), recentSHAs)
	}
	for _, sha := range shas {
		if info, ok := tab.bySHA(sha); !ok || info != knownScripts[sha] {
			t.Fatalf("bySHA(%s) = %+v, %v", sha, info, ok)
		}
	}
	for _, sha := range shas {
		if n := testing.AllocsPerRun(10, func() { tab.bySHA(sha) }); n != 0 {
			t.Errorf("bySHA(%s) with the table full: %v allocations, want 0", sha, n)
		}
	}
	// Unknown hashes and other lengths are not recognised, wherever their bytes are.
	for _, sha := range []string{strings.Repeat("0", 40), release[:39], ""} {
		if _, ok := tab.bySHA(sha); ok {
			t.Errorf("bySHA(%q) recognised", sha)
		}
	}
}
