package collectors

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

func TestTopK(t *testing.T) {
	ki := func(key string, idle int) walk.KeyInfo {
		return walk.KeyInfo{Key: key, Idle: time.Duration(idle) * time.Second}
	}
	tests := []struct {
		name string
		k    int
		in   []walk.KeyInfo
		want string
	}{
		{"fewer than k", 3, []walk.KeyInfo{ki("a", 1), ki("b", 5)}, "b a"},
		{"keeps the stalest", 2, []walk.KeyInfo{ki("a", 1), ki("b", 5), ki("c", 3), ki("d", 9), ki("e", 2)}, "d b"},
		{"ties broken by name", 2, []walk.KeyInfo{ki("z", 4), ki("m", 4), ki("a", 4)}, "a m"},
		{"a key SCAN returned twice is kept once", 3, []walk.KeyInfo{ki("a", 7), ki("b", 1), ki("a", 8), ki("c", 2)}, "a c b"},
		{"a repeat of an evicted key can come back", 1, []walk.KeyInfo{ki("a", 1), ki("b", 2), ki("a", 3)}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := newTopK(tt.k, false)
			for _, k := range tt.in {
				top.offer(k)
			}
			if got := topNames(top.sorted()); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if len(top.index) != len(top.items) {
				t.Errorf("index has %d entries for %d items", len(top.index), len(top.items))
			}
		})
	}
}

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

// TestTopKBoundsKeyLength feeds megabyte key names: the kept keys hold at most maxKeyLabelLen
// bytes each (with the label of the whole key), unless full keys were asked for.
func TestTopKBoundsKeyLength(t *testing.T) {
	for _, full := range []bool{false, true} {
		top := newTopK(5, full)
		for i := range 20 {
			key := fmt.Sprintf("%02d:", i) + strings.Repeat("k", 1<<20)
			top.offer(walk.KeyInfo{Key: key, Idle: time.Duration(i) * time.Second})
		}
		for _, k := range top.sorted() {
			switch {
			case !full && (len(k.Key) > walk.MaxKeyLabelLen || !k.Cut):
				t.Errorf("kept %d bytes of a 1 MiB key (cut %v), want at most %d", len(k.Key), k.Cut, walk.MaxKeyLabelLen)
			case full && len(k.Key) < 1<<20:
				t.Errorf("full keys: kept %d bytes", len(k.Key))
			case len(k.Label) > walk.MaxKeyLabelLen:
				t.Errorf("label of %d bytes", len(k.Label))
			}
		}
		if got := top.sorted(); len(got) != 5 || !strings.HasPrefix(got[0].Key, "19:") {
			t.Errorf("kept %d keys, first %.5q; want the 5 stalest, 19 first", len(got), got[0].Key)
		}
	}
}

// topNames is the names of a top-K list, in order, separated by spaces.
func topNames(ks []walk.KeyInfo) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Key
	}
	return strings.Join(names, " ")
}
