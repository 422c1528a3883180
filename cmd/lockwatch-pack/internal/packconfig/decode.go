package packconfig

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/internal/strictyaml"
)

// ErrUnknownKey is wrapped by the error for a key the configuration does not have, so callers
// (and tests) can tell a typo from a bad value.
var ErrUnknownKey = strictyaml.ErrUnknownKey

// ErrDuplicateKey is wrapped by the error for a key a mapping gives twice.
var ErrDuplicateKey = strictyaml.ErrDuplicateKey

// ErrBadValue is wrapped by the error for a value of the wrong kind (a word where a number or a
// duration belongs, a list where a mapping belongs).
var ErrBadValue = strictyaml.ErrBadValue

// badValue is an error line that matches ErrBadValue without ending in its text: the line
// already says what is wrong with the value.
type badValue struct{ msg string }

func (b badValue) Error() string { return b.msg }
func (b badValue) Unwrap() error { return ErrBadValue }

// badValuef formats a bad value's line (see badValue).
func badValuef(format string, args ...any) error {
	return badValue{fmt.Sprintf(format, args...)}
}

// decodeDocument applies one YAML document onto cfg with strictyaml and words its refusal by
// the setting's YAML path, its line, and the value written, which is what a user can act on.
func decodeDocument(doc *yaml.Node, cfg *Config) error {
	err := strictyaml.Decode(doc, cfg)
	var e *strictyaml.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case e.Kind == strictyaml.ErrUnknownKey:
		return fmt.Errorf("%s (line %d): %w; %s takes %s",
			join(e.Path, e.Key), e.Line, ErrUnknownKey, displayPath(e.Path), strings.Join(e.Keys, ", "))
	case e.Kind == strictyaml.ErrDuplicateKey:
		return fmt.Errorf("%s (line %d): %w (first at line %d)", join(e.Path, e.Key), e.Line, ErrDuplicateKey, e.FirstLine)
	case errors.Is(e.Cause, exporterconfig.ErrInvalid):
		return e.Cause // the exporter's loader's own words, with this file's line
	case e.Want == reflect.TypeFor[SecretRef]() && e.Value.Kind == yaml.ScalarNode:
		return fmt.Errorf("%s (line %d): %w", e.Path, e.Line, ErrLiteralPassword)
	case e.Keys != nil:
		return badValuef("%s (line %d): %s is not a mapping of settings (key: value)",
			displayPath(e.Path), e.Line, shown(e))
	case errors.Is(e.Cause, strictyaml.ErrNotFinite):
		return badValuef("%s (line %d): %s is not a finite number", displayPath(e.Path), e.Line, shown(e))
	}
	return badValuef("%s (line %d): %s is not %s", displayPath(e.Path), e.Line, shown(e), describeType(e.Want))
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

// shown renders the offending value: a scalar quoted as written, a list or mapping by kind. A
// value under a password key is never shown: it may be the password itself.
func shown(e *strictyaml.Error) string {
	n := e.Value
	switch {
	case strings.Contains(e.Path, "password"):
		return "the value"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
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
