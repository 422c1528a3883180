package observe

import (
	"math/rand/v2"
	"testing"

	"github.com/lockwatch/lockwatch/internal/glob"
)

// The matcher answers as glob.ScanMatch for every pattern shape it reads itself and for the
// ones it hands on, over keys built from the patterns' own bytes (so that near misses, keys
// equal to the literal, repeated runs and the empty key all occur).
func TestKeyMatcherAgreesWithScanMatch(t *testing.T) {
	patterns := []string{
		"*", "**", "***", "jobs:*", "*jobs:*", "*:bench", "jobs:1", "*aa*", "aa*", "*aa",
		"a*a", "*a*a*", "jobs:*:x", "jo?s:*", "[j]obs:*", `\*jobs*`, "*jobs:**", "**jobs:*", "a", "",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ajobs:*1x")
	keys := []string{"", "a", "aa", "aaa", "jobs:", "jobs:1", "xjobs:1", "jobs", "*jobs:", ":bench", "x:bench"}
	for range 20000 {
		k := make([]byte, rng.IntN(9))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		keys = append(keys, string(k))
	}
	kinds := map[string]matchKind{"*": matchAny, "jobs:*": matchPrefix, "*jobs:*": matchContains, "*:bench": matchSuffix, "jobs:1": matchExact, "**": matchGlob, "jo?s:*": matchGlob}
	for p, want := range kinds {
		if got := newKeyMatcher(p).kind; got != want {
			t.Errorf("pattern %q read as kind %d, want %d", p, got, want)
		}
	}
	for _, p := range patterns {
		m := newKeyMatcher(p)
		for _, k := range keys {
			if got, want := m.match(k), glob.ScanMatch(p, k); got != want {
				t.Fatalf("pattern %q (kind %d), key %q: match %v, ScanMatch %v", p, m.kind, k, got, want)
			}
		}
	}
}
