package collectors

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/collectors/internal/walk"
	"github.com/lockwatch/lockwatch/internal/glob"
	"github.com/lockwatch/lockwatch/internal/lockkeys"
)

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

func FuzzPrefixPushdown(f *testing.F) {
	for _, seed := range [][2]string{{"jobs:*", "jobs:1"}, {"jobs", "jobs"}, {`a\*b`, "a*b"}, {"a[bc]d", "acd"}, {"*", ""}, {"^a-]b:*", "^a-]b:1"}, {"{jobs*", "{jobs:1"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, key string) {
		c := walk.NewClassifier([]walk.Namespace{{Pattern: pattern}})
		if strings.HasPrefix(c.Match, "*") {
			t.Fatalf("pattern %q: pushed-down MATCH %q starts with '*'", pattern, c.Match)
		}
		if c.Match == "" || !glob.ScanMatch(pattern, key) {
			return
		}
		if !glob.ScanMatch(c.Match, key) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q does not", pattern, key, c.Match)
		}
		// The lock's fence key counts under the namespace too, so SCAN must return it.
		if fence := lockkeys.Fence(key); !glob.ScanMatch(c.Match, fence) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q hides its fence key %q", pattern, key, c.Match, fence)
		}
		if holder := lockkeys.Holder(key); !glob.ScanMatch(c.Match, holder) {
			t.Errorf("pattern %q matches %q, but the pushed-down MATCH %q hides its holder key %q", pattern, key, c.Match, holder)
		}
	})
}
