package exporterconfig

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/strictyaml"
)

// UnmarshalYAML decodes the document strictly (strictyaml), so that an unknown key, a key given
// twice or a value of the wrong kind is reported in this package's words (`line 3: unknown
// field "patern"`), whatever yaml.v3's own errors say.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	type plain Config // without this method, so decoding does not recurse
	return decodeStrict(n, (*plain)(c))
}

// decodeStrict applies n onto dst with strictyaml and words its refusal.
func decodeStrict(n *yaml.Node, dst any) error {
	err := strictyaml.Decode(n, dst)
	var e *strictyaml.Error
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case e.Kind == strictyaml.ErrUnknownKey:
		return fmt.Errorf("line %d: unknown field %q%s", e.Line, e.Key, secretHint(e.Keys, e.Key))
	case e.Kind == strictyaml.ErrDuplicateKey:
		// yaml.v3 would refuse it too, in an error that spans lines.
		return fmt.Errorf("line %d: field %q given twice (first at line %d)", e.Line, e.Key, e.FirstLine)
	case e.Cause != nil:
		return e.Cause // Duration's own message, with its line
	}
	return badValue(e)
}

// badValue words a value that does not fit its setting.
func badValue(e *strictyaml.Error) error {
	n, want := e.Value, e.Want
	switch {
	case e.Item != nil:
		n, want = e.Item, want.Elem()
	case e.Keys != nil:
		return fmt.Errorf("line %d: want a mapping of %s", n.Line, strings.Join(e.Keys, ", "))
	case want.Kind() == reflect.Slice:
		return fmt.Errorf("line %d: want a list", n.Line)
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single %s value", n.Line, want.Kind())
	}
	return fmt.Errorf("line %d: invalid value %q (want %s)", n.Line, n.Value, want.Kind())
}

// secretEnv names the environment variable that carries each secret of the redis section.
var secretEnv = map[string]string{
	"password":          "LOCK_EXPORTER_REDIS_PASSWORD",
	"sentinel_password": "LOCK_EXPORTER_REDIS_SENTINEL_PASSWORD",
}

// secretHint tells a user who wrote a secret (password:) into the file where it goes instead:
// the mapping's NAME_file field, or the redis section's environment variable. The file never
// holds secrets, so that it can be committed and shown.
func secretHint(keys []string, key string) string {
	if !slices.Contains(keys, key+"_file") {
		return ""
	}
	hint := fmt.Sprintf(": the file holds no secrets; give %s_file (a file holding it)", key)
	if env, ok := secretEnv[key]; ok {
		hint += " or, for the redis section, " + env
	}
	return hint
}
