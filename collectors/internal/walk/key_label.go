package walk

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLabelLen bounds a key label value in bytes, hash suffix included.
const MaxKeyLabelLen = 128

// hashSuffixLen is len("~") plus eight hex digits.
const hashSuffixLen = 9

// PrintableKey renders a raw (possibly binary) Redis key as printable, valid UTF-8: invalid
// bytes and non-printable characters become \xNN escapes, and a backslash or double quote in the
// key is escaped with a backslash. redis-cli reads exactly these escapes inside double quotes, so
// an operator can paste the key back and address that key, not another one.
func PrintableKey(key string) string {
	return escapeKey(key, -1)
}

// KeyLabel is PrintableKey capped at 128 bytes (MaxKeyLabelLen), for the key label. A key that has to
// be shortened keeps its head and gets "~" plus a hash of the whole key, so two long keys with
// the same prefix stay distinct.
func KeyLabel(key string) string {
	label := escapeKey(key, MaxKeyLabelLen)
	if len(label) <= MaxKeyLabelLen {
		return label
	}
	cut := MaxKeyLabelLen - hashSuffixLen
	// Back off to a rune boundary; escapes are ASCII, so this never leaves invalid UTF-8.
	for cut > 0 && !utf8.RuneStart(label[cut]) {
		cut--
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%s~%08x", label[:cut], h.Sum32())
}

// escapeKey escapes key, stopping once the output exceeds limit bytes (limit < 0: no limit).
func escapeKey(key string, limit int) string {
	var b strings.Builder
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		if (r == utf8.RuneError && size <= 1) || !unicode.IsPrint(r) {
			for _, c := range []byte(key[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		} else if r == '\\' || r == '"' {
			// Unescaped, a literal `\x41` would read back as "A", and `"` would end the argument.
			b.WriteByte('\\')
			b.WriteRune(r)
		} else {
			b.WriteString(key[i : i+size])
		}
		i += size
		if limit >= 0 && b.Len() > limit {
			break
		}
	}
	return b.String()
}
