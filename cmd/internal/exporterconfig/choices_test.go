package exporterconfig

import (
	"reflect"
	"strings"
	"testing"
)

// TestChoicesAreWhatValidateAccepts: every listed value passes Validate, a value outside the
// set fails it, and every key names a field of the configuration's types.
func TestChoicesAreWhatValidateAccepts(t *testing.T) {
	types := map[string]reflect.Type{"Scan": reflect.TypeFor[Scan](), "Namespace": reflect.TypeFor[Namespace]()}
	set := map[string]func(c *Config, v string){
		"Scan.Mode":       func(c *Config, v string) { c.Scan.Mode = v },
		"Scan.Feed":       func(c *Config, v string) { c.Scan.Feed = v },
		"Namespace.Types": func(c *Config, v string) { c.Namespaces[0].Types = []string{v} },
	}
	for key, values := range Choices() {
		typeName, field, _ := strings.Cut(key, ".")
		if typ, ok := types[typeName]; !ok {
			t.Fatalf("Choices key %q: no such type", key)
		} else if _, ok := typ.FieldByName(field); !ok {
			t.Fatalf("Choices key %q: %s has no field %s", key, typeName, field)
		}
		apply, ok := set[key]
		if !ok {
			t.Fatalf("Choices key %q: the test does not know how to set it", key)
		}
		for _, v := range append(values, "no-such-choice") {
			cfg := Defaults()
			cfg.Namespaces = []Namespace{{Name: "jobs", Pattern: "jobs:*"}}
			apply(&cfg, v)
			err := cfg.Validate()
			if want := v != "no-such-choice"; (err == nil) != want {
				t.Errorf("%s = %q: Validate() = %v, want accepted=%v", key, v, err, want)
			}
		}
	}
}
