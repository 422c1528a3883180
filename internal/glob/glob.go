// Package glob matches keys against Redis glob patterns with the semantics of the server's own
// matcher (the one behind KEYS, SCAN MATCH and PSUBSCRIBE), so that a key the exporter or the
// observe hook classifies on the client side is exactly a key `SCAN MATCH pattern` would return.
//
// The rules, including the corner cases where Redis differs from path.Match:
//   - `*` matches any run of bytes, but a pattern that has bytes left when the key has none
//     matches only if what is left is all `*`: so `*` does not match the empty key.
//   - `?` matches one byte (not one rune: keys are binary).
//   - `[...]` matches one byte from a set; `[^...]` negates it; `a-z` is a range, and a reversed
//     range `z-a` means the same as `a-z`; range bounds compare as signed bytes, as the
//     server's C chars do on x86-64, so `[\x9c-0]` does not contain '1'; `\x` inside a set is
//     the literal x. A set that is
//     never closed takes the rest of the pattern as its members.
//   - `\x` outside a set is the literal x; a trailing lone `\` is a literal backslash.
//   - Like the server, matching gives up (no match) past 1000 nested `*`, which bounds the work a
//     hostile pattern can cause.
package glob

// maxNesting is the depth of `*` recursion after which the server answers "no match".
const maxNesting = 1000

// ScanMatch reports whether `SCAN ... MATCH pattern` returns key. It is Match except for the
// pattern "*", which SCAN treats as no pattern at all, so that it returns the empty key too
// (found by TestMatchAgainstRedis; KEYS * does not return it).
func ScanMatch(pattern, key string) bool {
	return pattern == "*" || Match(pattern, key)
}

// Match reports whether key matches the Redis glob pattern.
func Match(pattern, key string) bool {
	skipLonger := false
	return match(pattern, key, &skipLonger, 0)
}

func match(p, s string, skipLonger *bool, nesting int) bool {
	if nesting > maxNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if match(p[1:], s, skipLonger, nesting+1) {
					return true
				}
				// Once a tail failed to match having used up the whole key, no shorter key
				// suffix can match it either: stop, as the server does.
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			p = p[1:]
		case '[':
			var in bool
			p, in = matchSet(p[1:], s[0])
			if !in {
				return false
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			if p[0] != s[0] {
				return false
			}
			p = p[1:]
		default:
			if p[0] != s[0] {
				return false
			}
			p = p[1:]
		}
		s = s[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchSet matches c against the set whose members start at p (just after its `[`). It
// returns the pattern after the set's `]` (empty when the set is never closed: it then takes
// the rest of the pattern as members) and whether c is in the set.
func matchSet(p string, c byte) (string, bool) {
	negate := len(p) > 0 && p[0] == '^'
	if negate {
		p = p[1:]
	}
	in := false
	for i := 0; ; i++ {
		rest := len(p) - i
		switch {
		case rest <= 0:
			return "", in != negate
		case p[i] == '\\' && rest >= 2:
			i++
			in = in || p[i] == c
		case p[i] == ']':
			return p[i+1:], in != negate
		case rest >= 3 && p[i+1] == '-':
			// The server compares C chars, which are signed on x86-64 (its usual platform): a
			// byte of 0x80 or more sorts below '0' in a range (found by FuzzMatchAgainstRedis).
			lo, hi, sc := int8(p[i]), int8(p[i+2]), int8(c)
			if lo > hi {
				lo, hi = hi, lo
			}
			i += 2
			in = in || (sc >= lo && sc <= hi)
		default:
			in = in || p[i] == c
		}
	}
}
