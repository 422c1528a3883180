package collectors

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

func TestTopK(t *testing.T) {
	ki := func(key string, idle int) KeyInfo { return KeyInfo{Key: key, Idle: time.Duration(idle) * time.Second} }
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
			top := newTopK(tt.k, false)
			for _, k := range tt.in {
				top.offer(k)
			}
			if got := keysOf(top.sorted()); got != tt.want {
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
		if len(l) > maxKeyLabelLen || !utf8.ValidString(l) || !strings.HasPrefix(l, "éé") {
			t.Errorf("long key label %q: want valid UTF-8 prefix within %d bytes", l, maxKeyLabelLen)
		}
	}
	if a == b {
		t.Errorf("two long keys with one prefix share the label %q", a)
	}
	if bin := KeyLabel(strings.Repeat("\xff", 200)); len(bin) > maxKeyLabelLen || !utf8.ValidString(bin) {
		t.Errorf("long binary key label %q: want valid UTF-8 within %d bytes", bin, maxKeyLabelLen)
	}
}

func TestOptionsValidation(t *testing.T) {
	ok := Namespace{Name: "jobs", Pattern: "jobs:*"}
	tests := []struct {
		name    string
		opts    Options
		wantErr string // "" for valid
	}{
		{"valid", Options{Namespaces: []Namespace{ok}}, ""},
		{"valid class and escape", Options{Namespaces: []Namespace{{Name: "a", Pattern: `job[0-9]:\*x[^]]`}}}, ""},
		{"no namespace", Options{}, "no namespace"},
		{"duplicate", Options{Namespaces: []Namespace{ok, ok}}, `duplicate namespace name "jobs"`},
		{"empty name", Options{Namespaces: []Namespace{{Pattern: "x"}}}, "empty name"},
		{"unprintable name", Options{Namespaces: []Namespace{{Name: "a\tb", Pattern: "x"}}}, "printable"},
		{"empty pattern", Options{Namespaces: []Namespace{{Name: "a"}}}, "empty pattern"},
		{"open class", Options{Namespaces: []Namespace{{Name: "a", Pattern: "job[12"}}}, "unterminated ["},
		{"lone backslash", Options{Namespaces: []Namespace{{Name: "a", Pattern: `job\`}}}, "lone backslash"},
		{"renew not below TTL", Options{Namespaces: []Namespace{{Name: "a", Pattern: "a", ExpectedTTL: time.Second, ExpectedRenewInterval: time.Second}}}, "shorter than expected TTL"},
		{"negative TTL", Options{Namespaces: []Namespace{{Name: "a", Pattern: "a", ExpectedTTL: -time.Second}}}, "negative"},
		{"negative batch", Options{Namespaces: []Namespace{ok}, BatchSize: -1}, "batch size"},
		{"negative cap", Options{Namespaces: []Namespace{ok}, MaxKeys: -5}, "max keys"},
		{"largest batch", Options{Namespaces: []Namespace{ok}, BatchSize: MaxBatchSize}, ""},
		{"batch above the bound", Options{Namespaces: []Namespace{ok}, BatchSize: MaxBatchSize + 1}, "batch size must be at most 10000, got 10001"},
		{"largest top-k", Options{Namespaces: []Namespace{ok}, TopK: MaxTopK}, ""},
		{"top-k above the bound", Options{Namespaces: []Namespace{ok}, TopK: MaxTopK + 1}, "top-k must be at most 100, got 101"},
		{"negative top-k", Options{Namespaces: []Namespace{ok}, TopK: -1}, "top-k must be at least 1"},
		{"huge cap is only a count", Options{Namespaces: []Namespace{ok}, MaxKeys: 1 << 30}, ""},
		{"negative timeout", Options{Namespaces: []Namespace{ok}, Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.withDefaults().validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			case err != nil && !errors.Is(err, ErrInvalidOptions):
				t.Errorf("error %v does not wrap ErrInvalidOptions", err)
			}
		})
	}
}

// TestHolderKeyOfMatchesLease checks holderKeyOf against lockkeys.Holder, and that it declines
// exactly the keys whose holder key would not share the lock's cluster slot (lease refuses to
// record a holder for those).
func TestHolderKeyOfMatchesLease(t *testing.T) {
	for _, lock := range []string{"jobs:1", "{jobs}:1", "cordum:wf:run:lock:abc", "", "{", "}{x}", "x{y}z", "w:deploy:holder"} {
		got, ok := holderKeyOf(lock)
		if !ok || got != lockkeys.Holder(lock) {
			t.Errorf("holderKeyOf(%q) = %q, %v; want %q, true", lock, got, ok, lockkeys.Holder(lock))
		}
	}
	for _, lock := range []string{"}", "a}b", "{}"} {
		if got, ok := holderKeyOf(lock); ok {
			t.Errorf("holderKeyOf(%q) = %q, true; want false (no valid tag, and a '}')", lock, got)
		}
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
			top.offer(KeyInfo{Key: key, Idle: time.Duration(i) * time.Second})
		}
		for _, k := range top.sorted() {
			switch {
			case !full && (len(k.Key) > maxKeyLabelLen || !k.Cut):
				t.Errorf("kept %d bytes of a 1 MiB key (cut %v), want at most %d", len(k.Key), k.Cut, maxKeyLabelLen)
			case full && len(k.Key) < 1<<20:
				t.Errorf("full keys: kept %d bytes", len(k.Key))
			case len(k.Label) > maxKeyLabelLen:
				t.Errorf("label of %d bytes", len(k.Label))
			}
		}
		if got := top.sorted(); len(got) != 5 || !strings.HasPrefix(got[0].Key, "19:") {
			t.Errorf("kept %d keys, first %.5q; want the 5 stalest, 19 first", len(got), got[0].Key)
		}
	}
}

// FuzzPrefixPushdown checks that the MATCH pushed down to SCAN never hides a key the namespace's
// own pattern matches, nor that key's fence and holder keys, and never starts with '*'.
func FuzzPrefixPushdown(f *testing.F) {
	for _, seed := range [][2]string{{"jobs:*", "jobs:1"}, {"jobs", "jobs"}, {`a\*b`, "a*b"}, {"a[bc]d", "acd"}, {"*", ""}, {"^a-]b:*", "^a-]b:1"}, {"{jobs*", "{jobs:1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		c := newClassifier([]Namespace{{Name: "n", Pattern: pattern}})
		if strings.HasPrefix(c.match, "*") {
			t.Fatalf("pattern %q: pushed-down MATCH %q starts with '*'", pattern, c.match)
		}
		if c.match == "" || !glob.ScanMatch(pattern, key) {
			return
		}
		if !glob.ScanMatch(c.match, key) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q does not", pattern, key, c.match)
		}
		// The lock's fence key counts under the namespace too, so SCAN must return it.
		if fence := lockkeys.Fence(key); !glob.ScanMatch(c.match, fence) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q hides its fence key %q", pattern, key, c.match, fence)
		}
		if holder := lockkeys.Holder(key); !glob.ScanMatch(c.match, holder) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q hides its holder key %q", pattern, key, c.match, holder)
		}
	})
}
