package packconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/internal/strictyaml"
)

// settingPaths lists the YAML path of every leaf setting of t, e.g. alerts.wait_p99.for.
func settingPaths(t reflect.Type, prefix string) []string {
	var paths []string
	for _, f := range strictyaml.Fields(t) {
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			paths = append(paths, settingPaths(f.Type, join(prefix, f.Key))...)
			continue
		}
		paths = append(paths, join(prefix, f.Key))
	}
	return paths
}

// TestEverySettingIsDocumented: docs/pack.md names every setting by its full path, in
// backquotes, or through the placeholder forms it explains (alerts.<ratio>.…,
// alerts.<lifecycle_ratio>.…, and the simple
// alerts' table with their three keys). A new setting without documentation fails here.
func TestEverySettingIsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "pack.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	// The simple alerts are documented together, in one table.
	var simple []string
	for f := range reflect.TypeFor[Alerts]().Fields() {
		if f.Type == reflect.TypeFor[SimpleAlert]() {
			simple = append(simple, f.Tag.Get("yaml"))
		}
	}
	if len(simple) < 5 {
		t.Fatalf("found only %d simple alerts; the walk is broken", len(simple))
	}
	paths := settingPaths(reflect.TypeFor[Config](), "")
	if len(paths) < 40 {
		t.Fatalf("found only %d settings; the walk is broken", len(paths))
	}
	for _, p := range paths {
		forms := []string{"`" + p + "`"}
		for _, ratio := range []string{"not_owned_ratio", "renewal_failure_ratio"} {
			if rest, ok := strings.CutPrefix(p, "alerts."+ratio+"."); ok {
				forms = append(forms, "`alerts.<ratio>."+rest+"`")
			}
		}
		for _, ratio := range []string{"lapse_ratio", "takeover_ratio"} {
			if rest, ok := strings.CutPrefix(p, "alerts."+ratio+"."); ok {
				forms = append(forms, "`alerts.<lifecycle_ratio>."+rest+"`")
			}
		}
		for _, s := range simple {
			if rest, ok := strings.CutPrefix(p, "alerts."+s+"."); ok &&
				strings.Contains(doc, "`alerts."+s+"`") && strings.Contains(doc, "has `disabled`, `severity` and `for`") {
				forms = append(forms, "`alerts."+s+"` ("+rest+")")
				forms = append(forms, "`alerts."+s+"`")
			}
		}
		found := false
		for _, f := range forms {
			found = found || strings.Contains(doc, f)
		}
		if !found {
			t.Errorf("docs/pack.md does not document %s", p)
		}
	}
}
