package glob

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// serverMatch asks a real Redis whether SCAN MATCH pattern returns key, in a database that holds
// key and nothing else.
func serverMatch(t *testing.T, c *redis.Client, pattern, key string) bool {
	t.Helper()
	ctx := context.Background()
	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k == key {
				return true
			}
		}
		if next == 0 {
			return false
		}
		cursor = next
	}
}

// matchServer compares ScanMatch with the server's SCAN MATCH. go-redis sends no MATCH for an empty
// pattern, so that case (tested in TestMatch) is left out.
func matchServer(t *testing.T, c *redis.Client, pattern, key string) {
	t.Helper()
	if pattern == "" {
		return
	}
	if got, want := ScanMatch(pattern, key), serverMatch(t, c, pattern, key); got != want {
		t.Errorf("ScanMatch(%q, %q) = %v, redis SCAN MATCH says %v", pattern, key, got, want)
	}
}

// alphabet favours the bytes the matcher treats specially, and a few that ranges compare.
const alphabet = `*?[]^-\ab:{}z`

func generate(r *rand.Rand, maxLen int) string {
	b := make([]byte, r.IntN(maxLen+1))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestMatchAgainstRedis compares ScanMatch with a real redis-server on generated patterns and keys:
// each pattern against keys generated at random and keys derived from the pattern itself (its
// literal bytes, so that matches are common, not only mismatches).
func TestMatchAgainstRedis(t *testing.T) {
	c := redistest.Start(t).Client(t)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1500 {
		pattern := generate(r, 8)
		for _, key := range []string{generate(r, 6), derive(r, pattern)} {
			matchServer(t, c, pattern, key)
		}
	}
}

// derive turns a pattern into a key it is likely to match: specials replaced by plain bytes.
func derive(r *rand.Rand, pattern string) string {
	b := []byte(pattern)
	for i, c := range b {
		switch c {
		case '*', '?', '[', ']', '\\', '^', '-':
			b[i] = "ab:"[r.IntN(3)]
		}
	}
	return string(b)
}

// FuzzMatchAgainstRedis extends TestMatchAgainstRedis with the fuzzer's inputs
// (go test -fuzz=FuzzMatchAgainstRedis ./internal/glob).
func FuzzMatchAgainstRedis(f *testing.F) {
	for _, seed := range [][2]string{{"a*", "ab"}, {"[a-", "b"}, {`\`, `\`}, {"[^]a]", "a"}, {"*?*", "x"}, {"[z-a]", "m"}} {
		f.Add(seed[0], seed[1])
	}
	c := redistest.Start(f).Client(f)
	f.Fuzz(func(t *testing.T, pattern, key string) {
		if len(pattern) > 64 || len(key) > 64 {
			return
		}
		matchServer(t, c, pattern, key)
	})
}
