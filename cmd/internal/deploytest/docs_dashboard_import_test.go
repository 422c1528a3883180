package deploytest

import (
	"regexp"
	"strings"
	"testing"
)

// importFile is a dashboard file a doc tells to upload or import: dashboards/… or
// dashboards-import/….
var importFile = regexp.MustCompile("`(dashboards(?:-import)?/lockwatch-[a-z]+\\.json)`")

// TestDashboardImportDocsAgree: README's step "Import the dashboards" and the section of
// docs/dashboards.md it sends readers to for Grafana's "Import dashboard" name the same files,
// and that section does not say the opposite of what Grafana does with them. (README named
// dashboards-import/, which asks for a datasource on import; docs/dashboards.md named only
// dashboards/ and said nothing asks for one.)
func TestDashboardImportDocsAgree(t *testing.T) {
	read := func(rel string) string { return readRepoFile(t, rel) }
	section := func(doc, text, start string) string {
		_, rest, ok := strings.Cut(text, start)
		if !ok {
			t.Fatalf("%s: no %q", doc, start)
		}
		if i := strings.Index(rest, "\n#"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.Index(rest, "\n5. "); i >= 0 && doc == "README.md" {
			rest = rest[:i]
		}
		return rest
	}
	files := func(text string) map[string]bool {
		got := map[string]bool{}
		for _, m := range importFile.FindAllStringSubmatch(text, -1) {
			got[m[1]] = true
		}
		return got
	}
	readmeStep := section("README.md", read("README.md"), "**Import the dashboards**")
	var uiImport []string
	for f := range files(readmeStep) {
		if strings.HasPrefix(f, "dashboards-import/") {
			uiImport = append(uiImport, f)
		}
	}
	if len(uiImport) == 0 {
		t.Fatalf("README.md's import step names no dashboards-import/ file:\n%s", readmeStep)
	}
	dashDoc := read("docs/dashboards.md")
	uiSection := section("docs/dashboards.md", dashDoc, "## Import through the UI")
	inSection := files(uiSection)
	for _, f := range uiImport {
		if !inSection[f] {
			t.Errorf("README.md imports %s through Grafana's UI; docs/dashboards.md's \"Import through the UI\" does not name it", f)
		}
	}
	if strings.Contains(dashDoc, "nothing asks for `${DS_PROMETHEUS}` on import") {
		t.Errorf("docs/dashboards.md says nothing asks for ${DS_PROMETHEUS} on import; dashboards-import/ does")
	}
}
