package observe

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/collectors"
)

// observe accepts and refuses namespace declarations as the exporter does, with the same
// message: a pattern Redis would take but that cannot mean what was meant (an unterminated
// class, a lone trailing backslash), a name that cannot be a label value.
func TestNamespaceRulesMatchTheExporter(t *testing.T) {
	for _, ns := range []Namespace{
		{Name: "jobs", Pattern: "jobs:[a-z"},
		{Name: "jobs", Pattern: `jobs:\`},
		{Name: "jobs", Pattern: ""},
		{Name: "", Pattern: "jobs:*"},
		{Name: "bad\nname", Pattern: "jobs:*"},
		{Name: strings.Repeat("n", 129), Pattern: "jobs:*"},
	} {
		_, err := New(Options{Registerer: prometheusRegistry(), Namespaces: []Namespace{ns}})
		if !errors.Is(err, ErrBadNamespace) {
			t.Fatalf("New(%+v) = %v, want ErrBadNamespace", ns, err)
		}
		exporterErr := collectors.Namespace{Name: ns.Name, Pattern: ns.Pattern}.Validate()
		if exporterErr == nil {
			t.Fatalf("the exporter accepts %+v, which observe refuses", ns)
		}
		// Each wraps the shared line in its own sentinel's words.
		_, shared, _ := strings.Cut(exporterErr.Error(), ": ")
		if !strings.HasSuffix(err.Error(), shared) {
			t.Errorf("observe says %q, the exporter %q", err, exporterErr)
		}
	}
	if _, err := New(Options{Registerer: prometheusRegistry(), Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:[a-z]*"}}}); err != nil {
		t.Errorf("a valid class refused: %v", err)
	}
}
