package exporterconfig

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// UnmarshalYAML checks the document against Config's shape first, so that an unknown key or a
// value of the wrong kind is reported in this package's words (`line 3: unknown field
// "patern"`), whatever yaml.v3's own errors say, then decodes it.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	if err := checkMapping(n, reflect.TypeFor[Config]()); err != nil {
		return err
	}
	type plain Config // without this method, so Decode does not recurse
	return n.Decode((*plain)(c))
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkNode reports the first place where n does not fit t: a mapping key t has no field for, a
// mapping or list where t wants something else, or a scalar that does not decode into t. Types
// with their own UnmarshalYAML (Duration) check themselves when decoded.
func checkNode(n *yaml.Node, t reflect.Type) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.ShortTag() == "!!null" || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkMapping(n, t)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("line %d: want a list", n.Line)
		}
		for _, item := range n.Content {
			if err := checkNode(item, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single %s value", n.Line, t.Kind())
	}
	// yaml.v3 truncates 2.5 into an int without complaint; a count must be written whole.
	fraction := t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 && n.ShortTag() != "!!int"
	if n.Decode(reflect.New(t).Interface()) != nil || fraction {
		return fmt.Errorf("line %d: invalid value %q (want %s)", n.Line, n.Value, t.Kind())
	}
	return nil
}

// checkMapping checks a mapping node against struct type t, key by key.
func checkMapping(n *yaml.Node, t reflect.Type) error {
	fields := yamlFields(t)
	if n.Kind != yaml.MappingNode {
		keys := make([]string, len(fields))
		for i, f := range fields {
			keys[i] = f.key
		}
		return fmt.Errorf("line %d: want a mapping of %s", n.Line, strings.Join(keys, ", "))
	}
	seen := make(map[string]int) // key -> its line
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		at := slices.IndexFunc(fields, func(f yamlField) bool { return f.key == key.Value })
		if at < 0 {
			return fmt.Errorf("line %d: unknown field %q%s", key.Line, key.Value, secretHint(fields, key.Value))
		}
		if first, ok := seen[key.Value]; ok {
			// yaml.v3 would refuse it too, in an error that spans lines.
			return fmt.Errorf("line %d: field %q given twice (first at line %d)", key.Line, key.Value, first)
		}
		seen[key.Value] = key.Line
		if err := checkNode(value, fields[at].typ); err != nil {
			return err
		}
	}
	return nil
}

// yamlField is one key of a struct's YAML form.
type yamlField struct {
	key string
	typ reflect.Type
}

// yamlFields lists the YAML keys of struct type t in declaration order, with ",inline" structs'
// keys in line (Target inlines Redis).
func yamlFields(t reflect.Type) []yamlField {
	var fields []yamlField
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case opts == "inline":
			fields = append(fields, yamlFields(f.Type)...)
		case name != "":
			fields = append(fields, yamlField{name, f.Type})
		}
	}
	return fields
}

// secretEnv names the environment variable that carries each secret of the redis section.
var secretEnv = map[string]string{
	"password":          "LOCK_EXPORTER_REDIS_PASSWORD",
	"sentinel_password": "LOCK_EXPORTER_REDIS_SENTINEL_PASSWORD",
}

// secretHint tells a user who wrote a secret (password:) into the file where it goes instead:
// the mapping's NAME_file field, or the redis section's environment variable. The file never
// holds secrets, so that it can be committed and shown.
func secretHint(fields []yamlField, key string) string {
	if !slices.ContainsFunc(fields, func(f yamlField) bool { return f.key == key+"_file" }) {
		return ""
	}
	hint := fmt.Sprintf(": the file holds no secrets; give %s_file (a file holding it)", key)
	if env, ok := secretEnv[key]; ok {
		hint += " or, for the redis section, " + env
	}
	return hint
}
