package deploytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// chartValuesHeader opens docs/deploy.md's table of the chart's values.
const chartValuesHeader = "| value | default | meaning |\n"

// chartValueName is one value named in a row's first cell: `image.tag`, or `.tag` after it for
// the same parent.
var chartValueName = regexp.MustCompile("`(\\.?[A-Za-z][A-Za-z0-9_.]*)`")

// schemaNode is the part of values.schema.json the table is checked against.
type schemaNode struct {
	Properties map[string]schemaNode `json:"properties"`
}

// documentedChartValues reads the values docs/deploy.md's table names, each as a full path
// (`.port` after `service.type` is service.port).
func documentedChartValues(t *testing.T, root string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), chartValuesHeader)
	if !ok {
		t.Fatal("docs/deploy.md: no chart values table (" + strings.TrimSpace(chartValuesHeader) + ")")
	}
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	var names []string
	for _, row := range strings.Split(table, "\n")[1:] {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		parent := ""
		for _, m := range chartValueName.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if strings.HasPrefix(name, ".") {
				name = parent + name
			} else if i := strings.LastIndex(name, "."); i >= 0 {
				parent = name[:i]
			} else {
				parent = name
			}
			names = append(names, name)
		}
	}
	if len(names) < 20 {
		t.Fatalf("docs/deploy.md: only %d chart values found; the pattern is broken", len(names))
	}
	return names
}

// TestChartValuesTableMatchesTheSchema: every value docs/deploy.md's chart table names is a key
// of the chart's values.schema.json, and every top-level key of the schema has a row, so a value
// the chart gains, renames or drops fails here rather than in a user's values file.
func TestChartValuesTableMatchesTheSchema(t *testing.T) {
	root := testkit.RepoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "helm", "lock-exporter", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaNode
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	topLevel := map[string]bool{}
	for _, name := range documentedChartValues(t, root) {
		node, ok := schema, true
		for _, part := range strings.Split(name, ".") {
			if node, ok = node.Properties[part]; !ok {
				break
			}
		}
		if !ok {
			t.Errorf("docs/deploy.md's chart values table names %s, which values.schema.json does not have", name)
		}
		topLevel[strings.Split(name, ".")[0]] = true
	}
	for key := range schema.Properties {
		if key != "global" && !topLevel[key] { // global is Helm's, shared with parent charts
			t.Errorf("values.schema.json has %s, which docs/deploy.md's chart values table does not name", key)
		}
	}
}
