package packconfig

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// ErrUnknownKey is wrapped by the error for a key the configuration does not have, so callers
// (and tests) can tell a typo from a bad value.
var ErrUnknownKey = errors.New("unknown key")

// ErrDuplicateKey is wrapped by the error for a key a mapping gives twice.
var ErrDuplicateKey = errors.New("key given twice")

// ErrBadValue is wrapped by the error for a value of the wrong kind (a word where a number or a
// duration belongs, a list where a mapping belongs).
var ErrBadValue = errors.New("bad value")

// badValue is an error line that matches ErrBadValue without ending in its text: the line
// already says what is wrong with the value.
type badValue struct{ msg string }

func (b badValue) Error() string { return b.msg }
func (b badValue) Unwrap() error { return ErrBadValue }

// badValuef formats a bad value's line (see badValue).
func badValuef(format string, args ...any) error {
	return badValue{fmt.Sprintf(format, args...)}
}

// decodeNode applies one YAML document onto dst, walking the YAML tree and the Config struct
// together. yaml.v3's own strict decoding names Go types in its errors ("field threshold not
// found in type packconfig.WaitAlert"); walking ourselves lets every error name the setting by
// its YAML path, its line, and the value written, which is what a user can act on.
func decodeNode(n *yaml.Node, dst reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return decodeNode(n.Content[0], dst, path)
	}
	if n.Kind == 0 || n.Tag == "!!null" {
		// "alerts:" with nothing below it keeps the defaults, as an absent key would.
		return nil
	}
	if dst.Kind() == reflect.Struct {
		return decodeMapping(n, dst, path)
	}
	// yaml.v3 truncates 2.5 into an int field without complaint; a count must be written whole.
	wholeNumberWanted := dst.Kind() == reflect.Int && n.ShortTag() != "!!int"
	if err := n.Decode(dst.Addr().Interface()); err != nil || wholeNumberWanted {
		return badValuef("%s (line %d): %s is not %s",
			displayPath(path), n.Line, shown(n), describeType(dst.Type()))
	}
	// YAML's .nan and .inf are floats, but no setting means them: a NaN threshold or guard
	// compares false with everything (the alert loads and never fires), and Grafana's JSON has
	// no infinity for a threshold line.
	if dst.Kind() == reflect.Float64 {
		if f := dst.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return badValuef("%s (line %d): %s is not a finite number",
				displayPath(path), n.Line, shown(n))
		}
	}
	return nil
}

// decodeMapping applies a YAML mapping onto a struct, field by field, refusing keys the struct
// has no field for.
func decodeMapping(n *yaml.Node, dst reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return badValuef("%s (line %d): %s is not a mapping of settings (key: value)",
			displayPath(path), n.Line, shown(n))
	}
	fields := yamlFields(dst.Type())
	seen := make(map[string]int) // key -> its line
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		index, ok := fields[key.Value]
		if !ok {
			return fmt.Errorf("%s (line %d): %w; %s takes %s",
				join(path, key.Value), key.Line, ErrUnknownKey, displayPath(path), knownKeys(dst.Type()))
		}
		if first, ok := seen[key.Value]; ok {
			// Applied in turn, the later value would silently replace the first.
			return fmt.Errorf("%s (line %d): %w (first at line %d)", join(path, key.Value), key.Line, ErrDuplicateKey, first)
		}
		seen[key.Value] = key.Line
		if err := decodeNode(value, dst.Field(index), join(path, key.Value)); err != nil {
			return err
		}
	}
	return nil
}

// yamlFields maps each YAML key of a struct type to its field index.
func yamlFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

// knownKeys lists a struct type's YAML keys in declaration order, for the unknown-key message.
func knownKeys(t reflect.Type) string {
	var names []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

var durationType = reflect.TypeFor[model.Duration]()

// describeType says what a setting takes, in the words of the settings reference (docs/pack.md).
func describeType(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration such as 30s, 5m or 1h"
	case t.Kind() == reflect.Slice && t.Elem() == durationType:
		return "a list of durations such as [5m, 1h]"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings such as [a, b]"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Int:
		return "a whole number"
	case t.Kind() == reflect.String:
		return "a string"
	}
	return "a valid value"
}

// shown renders the offending value: a scalar quoted as written, a list or mapping by kind.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return "the value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func displayPath(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}
