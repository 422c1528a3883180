package walk

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTopK(t *testing.T) {
	ki := func(key string, idle int) KeyInfo {
		return KeyInfo{Key: key, Idle: time.Duration(idle) * time.Second}
	}
	tests := []struct {
		name string
		k    int
		in   []KeyInfo
		want string
	}{
		{"fewer than k", 3, []KeyInfo{ki("a", 1), ki("b", 5)}, "b a"},
		{"keeps the stalest", 2, []KeyInfo{ki("a", 1), ki("b", 5), ki("c", 3), ki("d", 9), ki("e", 2)}, "d b"},
		{"ties broken by name", 2, []KeyInfo{ki("z", 4), ki("m", 4), ki("a", 4)}, "a m"},
		{"a key SCAN returned twice is kept once", 3, []KeyInfo{ki("a", 7), ki("b", 1), ki("a", 8), ki("c", 2)}, "a c b"},
		{"a repeat of an evicted key can come back", 1, []KeyInfo{ki("a", 1), ki("b", 2), ki("a", 3)}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := NewTopK(tt.k, false)
			for _, k := range tt.in {
				top.Offer(k)
			}
			if got := topNames(top.Sorted()); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if len(top.index) != len(top.items) {
				t.Errorf("index has %d entries for %d items", len(top.index), len(top.items))
			}
		})
	}
}

// TestTopKBoundsKeyLength feeds megabyte key names: the kept keys hold at most maxKeyLabelLen
// bytes each (with the label of the whole key), unless full keys were asked for.
func TestTopKBoundsKeyLength(t *testing.T) {
	for _, full := range []bool{false, true} {
		top := NewTopK(5, full)
		for i := range 20 {
			key := fmt.Sprintf("%02d:", i) + strings.Repeat("k", 1<<20)
			top.Offer(KeyInfo{Key: key, Idle: time.Duration(i) * time.Second})
		}
		for _, k := range top.Sorted() {
			switch {
			case !full && (len(k.Key) > MaxKeyLabelLen || !k.Cut):
				t.Errorf("kept %d bytes of a 1 MiB key (cut %v), want at most %d", len(k.Key), k.Cut, MaxKeyLabelLen)
			case full && len(k.Key) < 1<<20:
				t.Errorf("full keys: kept %d bytes", len(k.Key))
			case len(k.Label) > MaxKeyLabelLen:
				t.Errorf("label of %d bytes", len(k.Label))
			}
		}
		if got := top.Sorted(); len(got) != 5 || !strings.HasPrefix(got[0].Key, "19:") {
			t.Errorf("kept %d keys, first %.5q; want the 5 stalest, 19 first", len(got), got[0].Key)
		}
	}
}

// topNames is the names of a top-K list, in order, separated by spaces.
func topNames(ks []KeyInfo) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Key
	}
	return strings.Join(names, " ")
}
