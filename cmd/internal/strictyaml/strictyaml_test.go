package strictyaml

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Count int     `yaml:"count"`
	Ratio float64 `yaml:"ratio"`
}

type Conn struct {
	Addr string `yaml:"addr"`
}

type doc struct {
	Name   string   `yaml:"name"`
	Tags   []string `yaml:"tags"`
	Inner  inner    `yaml:"inner"`
	Items  []inner  `yaml:"items"`
	Conn   `yaml:",inline"`
	Hidden string `yaml:"-"`
}

// TestDecodeRefusals: each refusal is an *Error of the right kind, with the path, line and
// value a caller words its message from.
func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		path     string
		line     int
		key      string
	}{
		{"unknown key", "name: a\nnmae: b\n", ErrUnknownKey, "", 2, "nmae"},
		{"unknown nested key", "inner:\n  cuont: 1\n", ErrUnknownKey, "inner", 2, "cuont"},
		{"unknown key in a list item", "items:\n  - count: 1\n  - cnt: 2\n", ErrUnknownKey, "items[1]", 3, "cnt"},
		{"hidden field is unknown", "Hidden: x\n", ErrUnknownKey, "", 1, "Hidden"},
		{"duplicate", "name: a\nname: b\n", ErrDuplicateKey, "", 2, "name"},
		{"word for a number", "inner: {count: many}\n", ErrBadValue, "inner.count", 1, ""},
		{"fraction for a whole number", "inner:\n  count: 2.5\n", ErrBadValue, "inner.count", 2, ""},
		{"nan", "inner:\n  ratio: .nan\n", ErrBadValue, "inner.ratio", 2, ""},
		{"list for a single value", "name: [a]\n", ErrBadValue, "name", 1, ""},
		{"value for a list", "tags: a\n", ErrBadValue, "tags", 1, ""},
		{"mapping in a list of values", "tags:\n  - a\n  - {b: c}\n", ErrBadValue, "tags", 2, ""},
		{"value for a mapping", "inner: 3\n", ErrBadValue, "inner", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tt.in), &n); err != nil {
				t.Fatal(err)
			}
			var d doc
			err := Decode(&n, &d)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tt.kind) {
				t.Fatalf("Decode(%q) = %v, want an *Error of %v", tt.in, err, tt.kind)
			}
			if e.Path != tt.path || e.Line != tt.line || e.Key != tt.key {
				t.Errorf("path %q line %d key %q, want %q %d %q", e.Path, e.Line, e.Key, tt.path, tt.line, tt.key)
			}
		})
	}
}

// TestDecodeKeepsWhatTheDocumentDoesNotSet: absent and null keys keep dst's values, inline
// fields decode in line, and a list replaces the one in dst.
func TestDecodeKeepsWhatTheDocumentDoesNotSet(t *testing.T) {
	d := doc{Name: "default", Tags: []string{"x", "y"}, Inner: inner{Count: 7}}
	in := "name: ~\ntags: [z]\ninner: {ratio: 0.5}\naddr: host:1\nitems: [{count: 1}]\n"
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(in), &n); err != nil {
		t.Fatal(err)
	}
	if err := Decode(&n, &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "default" || len(d.Tags) != 1 || d.Tags[0] != "z" || d.Inner != (inner{Count: 7, Ratio: 0.5}) ||
		d.Addr != "host:1" || len(d.Items) != 1 || d.Items[0].Count != 1 {
		t.Errorf("decoded %+v", d)
	}
}
