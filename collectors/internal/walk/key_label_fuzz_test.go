package walk

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/lockns"
)

// unquoteRedisCLI reads s the way redis-cli reads the inside of a double-quoted argument
// (sdssplitargs): \xHH is a byte, \n \r \t \b \a are control characters, and a backslash before
// any other character stands for that character. ok is false where redis-cli would reject the
// argument: a bare double quote (it would end the argument) or a trailing lone backslash.
func unquoteRedisCLI(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return "", false
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			return "", false
		}
		i++
		switch s[i] {
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteByte('x')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'a':
			b.WriteByte('\a')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), true
}

// FuzzKeyLabel checks the promises PrintableKey and KeyLabel make for any key bytes:
// printable valid UTF-8; PrintableKey pasted into redis-cli between double quotes is the key
// again (so inspect output can be copied into a command safely); KeyLabel stays within
// maxKeyLabelLen, equals PrintableKey when that fits, and tells short keys apart.
func FuzzKeyLabel(f *testing.F) {
	for _, seed := range [][2]string{
		{"cordum:scheduler:job:42", "cordum:scheduler:job:43"},
		{"a\x01", `a\x01`},
		{`job\x41`, "jobA"},
		{`a"b`, `a\"b`},
		{"\xff\xfe", "é"},
		{strings.Repeat("k", 200), strings.Repeat("k", 199) + "j"},
		{"tab\there", `tab\there`},
		{`trailing\`, `trailing\\`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, key := range []string{a, b} {
			p := PrintableKey(key)
			if !lockns.Printable(p) {
				t.Fatalf("PrintableKey(%q) = %q: not printable UTF-8", key, p)
			}
			if back, ok := unquoteRedisCLI(p); !ok || back != key {
				t.Fatalf("PrintableKey(%q) = %q reads back in redis-cli as %q (ok %v)", key, p, back, ok)
			}
			l := KeyLabel(key)
			if len(l) > MaxKeyLabelLen || !lockns.Printable(l) {
				t.Fatalf("KeyLabel(%q) = %q: want printable UTF-8 of at most %d bytes", key, l, MaxKeyLabelLen)
			}
			if len(p) <= MaxKeyLabelLen && l != p {
				t.Fatalf("KeyLabel(%q) = %q, want PrintableKey %q (it fits)", key, l, p)
			}
		}
		if a != b && len(PrintableKey(a)) <= MaxKeyLabelLen && len(PrintableKey(b)) <= MaxKeyLabelLen && KeyLabel(a) == KeyLabel(b) {
			t.Fatalf("keys %q and %q share the label %q", a, b, KeyLabel(a))
		}
	})
}
