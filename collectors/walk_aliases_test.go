package collectors

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

func TestKeyLabel(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct {
		name, key, want string
	}{
		{"plain", "jobs:42", "jobs:42"},
		{"valid UTF-8 kept", "jobs:café", "jobs:café"},
		{"invalid bytes escaped", "a\xff\xfeb", `a\xff\xfeb`},
		{"control characters escaped", "a\nb\x00", `a\x0ab\x00`},
		{"truncated sequence escaped", "x\xe2\x82", `x\xe2\x82`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyLabel(tt.key); got != tt.want {
				t.Errorf("KeyLabel(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
	a, b := KeyLabel(long+"a"), KeyLabel(long+"b")
	for _, l := range []string{a, b} {
		if len(l) > walk.MaxKeyLabelLen || !utf8.ValidString(l) || !strings.HasPrefix(l, "éé") {
			t.Errorf("long key label %q: want valid UTF-8 prefix within %d bytes", l, walk.MaxKeyLabelLen)
		}
	}
	if a == b {
		t.Errorf("two long keys with one prefix share the label %q", a)
	}
	if bin := KeyLabel(strings.Repeat("\xff", 200)); len(bin) > walk.MaxKeyLabelLen || !utf8.ValidString(bin) {
		t.Errorf("long binary key label %q: want valid UTF-8 within %d bytes", bin, walk.MaxKeyLabelLen)
	}
}

func TestPrintableKeyKeepsLength(t *testing.T) {
	key := strings.Repeat("k", 500) + "\xff"
	if got := PrintableKey(key); got != strings.Repeat("k", 500)+`\xff` {
		t.Errorf("PrintableKey shortened or mangled a long key: %q", got)
	}
}
