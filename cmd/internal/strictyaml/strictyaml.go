// Package strictyaml decodes a YAML document onto a Go struct strictly: a key the struct has no
// field for, a key given twice, and a value that does not fit its field's type are errors, each
// reported with its line and YAML path. yaml.v3's own strict mode reports these in Go's words
// (type names, several lines per error); here every refusal is an *Error that the caller words
// for its users, so the exporter's and the pack's configurations share one set of rules.
//
// Keys not in the document keep the value dst already holds (the caller's defaults); so does a
// key whose value is null. A list in the document replaces the list in dst as a whole.
package strictyaml

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// The kinds of refusal; every *Error matches one of them with errors.Is.
var (
	ErrUnknownKey   = errors.New("unknown key")
	ErrDuplicateKey = errors.New("key given twice")
	ErrBadValue     = errors.New("bad value")
)

// ErrNotFinite is the Cause of a bad value that is YAML's .nan or .inf where a number belongs:
// no setting means them, and a NaN threshold compares false with everything.
var ErrNotFinite = errors.New("not a finite number")

// Error says where and why a document does not fit the struct.
type Error struct {
	// Kind is ErrUnknownKey, ErrDuplicateKey or ErrBadValue.
	Kind error
	// Path is the YAML path of the mapping holding Key (unknown and duplicate keys) or of the
	// bad value: dotted keys with [i] for list items, "" for the document itself.
	Path string
	// Line is the line of the key, or of the bad value.
	Line int
	// Key is the unknown or duplicated key.
	Key string
	// FirstLine is where a duplicated key was first given.
	FirstLine int
	// Keys are the keys the mapping takes, in declaration order (for an unknown key, and for a
	// bad value where a mapping was wanted).
	Keys []string
	// Value is the bad value as written; Item the item of it that does not fit, when Value is
	// a list of single values.
	Value, Item *yaml.Node
	// Want is the Go type the value had to fit.
	Want reflect.Type
	// Cause is the error of the type's own UnmarshalYAML, or ErrNotFinite; nil otherwise.
	Cause error
}

func (e *Error) Error() string {
	switch e.Kind {
	case ErrUnknownKey:
		return fmt.Sprintf("%s (line %d): unknown key", join(e.Path, e.Key), e.Line)
	case ErrDuplicateKey:
		return fmt.Sprintf("%s (line %d): key given twice (first at line %d)", join(e.Path, e.Key), e.Line, e.FirstLine)
	}
	return fmt.Sprintf("%s (line %d): bad value", e.Path, e.Line)
}

func (e *Error) Unwrap() error { return e.Kind }

// Decode applies document n onto dst, a pointer (to a struct, usually). It returns the first
// place, in document order, where n does not fit, as an *Error.
func Decode(n *yaml.Node, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("strictyaml: Decode wants a pointer, got %T", dst)
	}
	return decodeValue(n, v.Elem(), "")
}

// decodeValue applies node n onto v, whose YAML path is path.
func decodeValue(n *yaml.Node, v reflect.Value, path string) error {
	n = content(n)
	if n == nil || n.Kind == 0 || n.ShortTag() == "!!null" {
		return nil // "alerts:" with nothing below it keeps what dst holds, as an absent key does
	}
	t := v.Type()
	switch {
	case unmarshals(t):
		return decodeSingle(n, v, path)
	case t.Kind() == reflect.Struct:
		return decodeMapping(n, v, path)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && !unmarshals(t.Elem()):
		return decodeStructList(n, v, path)
	case t.Kind() == reflect.Slice:
		return decodeList(n, v, path)
	}
	return decodeSingle(n, v, path)
}

// content is n without its document and alias wrappers.
func content(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.DocumentNode:
			return nil
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// decodeMapping applies a mapping onto struct v, key by key.
func decodeMapping(n *yaml.Node, v reflect.Value, path string) error {
	fields := Fields(v.Type())
	if n.Kind != yaml.MappingNode {
		return &Error{Kind: ErrBadValue, Path: path, Line: n.Line, Value: n, Want: v.Type(), Keys: keys(fields)}
	}
	seen := make(map[string]int) // key -> its line
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		f, ok := fieldNamed(fields, key.Value)
		if !ok {
			return &Error{Kind: ErrUnknownKey, Path: path, Line: key.Line, Key: key.Value, Keys: keys(fields)}
		}
		if first, ok := seen[key.Value]; ok {
			// Applied in turn, the later value would silently replace the first.
			return &Error{Kind: ErrDuplicateKey, Path: path, Line: key.Line, Key: key.Value, FirstLine: first}
		}
		seen[key.Value] = key.Line
		if err := decodeValue(value, v.FieldByIndex(f.Index), join(path, key.Value)); err != nil {
			return err
		}
	}
	return nil
}

// decodeStructList applies a list of mappings onto a slice of structs, item by item; each item
// starts from the struct's zero value.
func decodeStructList(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return &Error{Kind: ErrBadValue, Path: path, Line: n.Line, Value: n, Want: v.Type()}
	}
	list := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if err := decodeValue(item, list.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(list)
	return nil
}

// decodeList applies a list of single values onto a slice. A bad item makes the whole list the
// bad value (Item says which), as the list is one setting.
func decodeList(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return &Error{Kind: ErrBadValue, Path: path, Line: n.Line, Value: n, Want: v.Type()}
	}
	list := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if err := decodeSingle(content(item), list.Index(i), path); err != nil {
			var e *Error
			errors.As(err, &e)
			e.Line, e.Value, e.Item, e.Want = n.Line, n, content(item), v.Type()
			return e
		}
	}
	v.Set(list)
	return nil
}

// decodeSingle decodes one value with yaml.v3: a scalar, or whatever a type with its own
// UnmarshalYAML takes. A number must fit its field exactly: yaml.v3 would truncate 2.5 into an
// int, and accept .nan and .inf as floats.
func decodeSingle(n *yaml.Node, v reflect.Value, path string) error {
	bad := &Error{Kind: ErrBadValue, Path: path, Line: n.Line, Value: n, Want: v.Type()}
	own := unmarshals(v.Type())
	if !own && n.Kind != yaml.ScalarNode {
		return bad
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		if own {
			bad.Cause = err
		}
		return bad
	}
	switch k := v.Kind(); {
	case own:
	case k >= reflect.Int && k <= reflect.Uint64 && n.ShortTag() != "!!int":
		return bad
	case (k == reflect.Float32 || k == reflect.Float64) && (math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0)):
		bad.Cause = ErrNotFinite
		return bad
	}
	return nil
}

// obsoleteUnmarshaler is yaml.v2's form of UnmarshalYAML, which yaml.v3 still calls
// (prometheus/common's model.Duration has it).
type obsoleteUnmarshaler interface {
	UnmarshalYAML(unmarshal func(any) error) error
}

// unmarshals reports whether type t decodes itself: its pointer has an UnmarshalYAML.
func unmarshals(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[yaml.Unmarshaler]()) || p.Implements(reflect.TypeFor[obsoleteUnmarshaler]())
}

// Field is one key of a struct type's YAML form.
type Field struct {
	Key   string
	Index []int // for reflect.Value.FieldByIndex
	Type  reflect.Type
}

// Fields lists the YAML keys of struct type t in declaration order: yaml tags, the keys of
// ",inline" structs in line, "-" and unexported fields left out.
func Fields(t reflect.Type) []Field {
	var fields []Field
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case opts == "inline":
			for _, inner := range Fields(f.Type) {
				inner.Index = append([]int{f.Index[0]}, inner.Index...)
				fields = append(fields, inner)
			}
		case name != "":
			fields = append(fields, Field{Key: name, Index: f.Index, Type: f.Type})
		}
	}
	return fields
}

func fieldNamed(fields []Field, key string) (Field, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

func keys(fields []Field) []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Key
	}
	return names
}

// join appends key to path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
