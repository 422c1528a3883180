package helmchart

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestSchemaCoversEveryConfigField walks exporterconfig.Config by its yaml tags and finds each
// key in the generated values.schema.json, under the chart value of its section: a field the
// exporter reads but the chart would refuse fails here.
func TestSchemaCoversEveryConfigField(t *testing.T) {
	data, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(typ reflect.Type, node map[string]any, path string)
	walk = func(typ reflect.Type, node map[string]any, path string) {
		for typ.Kind() == reflect.Slice && typ != durationType {
			items, _ := node["items"].(map[string]any)
			if items == nil {
				t.Errorf("%s: the schema has no items for a list", path)
				return
			}
			typ, node, path = typ.Elem(), items, path+"[]"
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		props, _ := node["properties"].(map[string]any)
		for f := range typ.Fields() {
			key, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case key == "-" || omittedFields[typ.Name()+"."+f.Name] != "":
			case opts == "inline":
				walk(f.Type, node, path)
			case props[key] == nil:
				t.Errorf("%s.%s (%s.%s) has no entry in values.schema.json", path, key, typ.Name(), f.Name)
			default:
				walk(f.Type, props[key].(map[string]any), path+"."+key)
			}
		}
	}
	walk(reflect.TypeFor[exporterconfig.Config](), schema, "")
}

// sampleValue is a value for a field of type typ that the exporter's loader accepts: a
// duration, the last of a set's choices, a number within every bound, true, or a text.
func sampleValue(typ reflect.Type, owner string) any {
	choices := exporterconfig.Choices()[owner]
	switch {
	case typ == durationType:
		return "1m30s"
	case choices != nil && typ.Kind() == reflect.String:
		return choices[len(choices)-1]
	case typ.Kind() == reflect.Slice:
		return []any{sampleValue(typ.Elem(), owner)}
	case typ.Kind() == reflect.Struct:
		m := map[string]any{}
		for _, f := range configFields(typ) {
			m[f.key] = sampleValue(f.typ, f.owner)
		}
		return m
	case typ.Kind() == reflect.Bool:
		return true
	case typ.Kind() == reflect.String:
		return strings.ToLower(strings.ReplaceAll(owner, ".", "-"))
	}
	return 7
}

// TestChartRendersEverySetting renders the generated chart with values that set every field
// of the exporter's configuration (made from its types, so a new field is in them), and loads
// the ConfigMap's file with the exporter's own loader: it must equal the same sections loaded
// directly, and leave no field at its zero value.
func TestChartRendersEverySetting(t *testing.T) {
	sections := sampleValue(reflect.TypeFor[exporterconfig.Config](), "Config").(map[string]any)
	sectionsYAML, err := yaml.Marshal(sections)
	if err != nil {
		t.Fatal(err)
	}
	want, err := exporterconfig.Load(testkit.WriteFile(t, "direct.yml", string(sectionsYAML)))
	if err != nil {
		t.Fatalf("the sample values do not load as an exporter configuration: %v\n%s", err, sectionsYAML)
	}
	checkNoZeroField(t, reflect.ValueOf(want), "config")

	out := helmTemplate(t, string(sectionsYAML))
	rendered := configMapFile(t, out)
	got, err := exporterconfig.Load(testkit.WriteFile(t, "rendered.yml", rendered))
	if err != nil {
		t.Fatalf("the chart's configuration does not load: %v\n%s", err, rendered)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the chart's configuration differs from its values:\nrendered:\n%s\nvalues:\n%s", rendered, sectionsYAML)
	}
}

// checkNoZeroField fails for a field of v left at its zero value (yaml:"-" fields aside).
func checkNoZeroField(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Tag.Get("yaml") == "-" || omittedFields[v.Type().Name()+"."+f.Name] != "" {
				continue
			}
			checkNoZeroField(t, v.Field(i), path+"."+f.Name)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			t.Errorf("%s is empty", path)
			return
		}
		checkNoZeroField(t, v.Index(0), path+"[0]")
	default:
		if v.IsZero() {
			t.Errorf("%s is not set by the sample values", path)
		}
	}
}

// TestRefusalsNameTheValueAndTheReason: what helm's schema check would refuse without a reason
// is refused by the templates, naming the setting, the value and what is wanted.
func TestRefusalsNameTheValueAndTheReason(t *testing.T) {
	for name, c := range map[string]struct{ values, want string }{
		"duration in words": {`scan: {timeout: 10 seconds}`,
			`scan.timeout "10 seconds" is not a duration: write a number and a unit`},
		"duration without a unit": {`namespaces: [{name: a, pattern: "a:*", expected_max_hold: 30}]`,
			`namespaces[0].expected_max_hold 30 is not a duration`},
		"target namespace duration": {`targets: [{name: t, addr: "t:6379", namespaces: [{name: a, pattern: "a:*", expected_ttl: 1d}]}]`,
			`targets[0].namespaces[0].expected_ttl "1d" is not a duration`},
		"unknown scan mode": {`scan: {mode: index}`,
			`scan.mode "index" is not one the exporter accepts: want one of auto, walk`},
		"unknown type": {`namespaces: [{name: a, pattern: "a:*", types: [string, list]}]`,
			`namespaces[0].types[1] "list" is not one the exporter accepts: want one of string, hash`},
		"latest tag": {`image: {tag: latest}`,
			`image.tag "latest" is refused: it names no release`},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, err := runHelm(t, "template", "lock-exporter", writeChart(t), "--values", testkit.WriteFile(t, "values.yml", c.values))
			if err == nil {
				t.Fatalf("helm template accepted %s", c.values)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("helm template of %s: want %q in\n%s", c.values, c.want, stderr)
			}
		})
	}
}

// writeChart writes the chart Generate makes for the default pack into a temporary directory
// and returns the chart's directory.
func writeChart(t *testing.T) string {
	t.Helper()
	files, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if _, err := pack.Write(root, files, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, filepath.FromSlash(Dir))
}

// helmTemplate renders the generated chart with values and returns the manifests.
func helmTemplate(t *testing.T, values string) string {
	t.Helper()
	out, stderr, err := runHelm(t, "template", "lock-exporter", writeChart(t), "--values", testkit.WriteFile(t, "values.yml", values))
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	return out
}

// runHelm runs the helm of tools/helm/go.mod's tool directive, with its configuration and
// caches in a temporary directory.
func runHelm(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := testkit.RepoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	locate := exec.CommandContext(ctx, "go", "tool", "-modfile="+filepath.Join(root, "tools", "helm", "go.mod"), "-n", "helm")
	locate.Dir, locate.Env = root, append(os.Environ(), "GOWORK=off")
	bin, err := locate.Output()
	if err != nil {
		t.Fatalf("building helm (go tool -n helm in tools/helm): %v", err)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(bin)), args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// configMapFile returns the exporter's configuration file from the rendered ConfigMap.
func configMapFile(t *testing.T, manifests string) string {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(manifests))
	for {
		var obj struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
		}
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("no ConfigMap with lock-exporter.yml in the rendered chart (%v)", err)
		}
		if file, ok := obj.Data["lock-exporter.yml"]; obj.Kind == "ConfigMap" && ok {
			return file
		}
	}
}

// TestNewFieldsReachTheSchema: a field of any kind a configuration type may gain gets a schema
// entry by its yaml tag, and a duration among them a template check, without a table entry.
func TestNewFieldsReachTheSchema(t *testing.T) {
	type lifecycle struct {
		Window   exporterconfig.Duration  `yaml:"takeover_window"`
		Expiry   bool                     `yaml:"ends_by_expiry"`
		Feed     string                   `yaml:"feed"`
		Ratio    float64                  `yaml:"ratio"`
		Optional *exporterconfig.Duration `yaml:"optional"`
		Labels   map[string]string        `yaml:"labels"`
		internal int
	}
	props := objectSchema(reflect.TypeFor[lifecycle]())["properties"].(map[string]any)
	want := map[string]string{"takeover_window": "", "ends_by_expiry": "boolean", "feed": "string",
		"ratio": "number", "optional": "", "labels": "object"}
	if len(props) != len(want) {
		t.Errorf("schema keys %v, want those of %v", props, want)
	}
	for key, typ := range want {
		entry, ok := props[key].(map[string]any)
		if !ok {
			t.Errorf("no schema entry for %s", key)
			continue
		}
		if got, _ := entry["type"].(string); got != typ {
			t.Errorf("%s: type %q, want %q", key, got, typ)
		}
	}
	spec := checkSpec(reflect.TypeFor[lifecycle](), "lifecycle")
	fields, _ := spec["fields"].(map[string]any)
	for _, key := range []string{"takeover_window", "optional"} {
		if fields[key] == nil {
			t.Errorf("no template check for the duration %s: %v", key, spec)
		}
	}
}
