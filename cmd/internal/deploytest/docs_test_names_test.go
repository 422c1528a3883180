package deploytest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// citedTest is a Go test, benchmark, fuzz target or example a doc names as the proof of a claim.
var citedTest = regexp.MustCompile("`((?:Test|Benchmark|Fuzz|Example)[A-Z][A-Za-z0-9_]*)`")

// historicalTests are names the docs cite as history, with the doc that says so: renamed or
// removed since, and said to be.
var historicalTests = map[string]string{}

// TestDocTestNamesExist: every test, benchmark, fuzz target or example the README and docs cite
// (`TestLeastPrivilegeACL`) is a function of some _test.go file, so a reader can run the proof
// a doc points to; a rename without its docs fails here. (docs/observe.md cited
// TestOTelAndPrometheusPathsRecordTheSameSeries after it had moved to integration/otel as
// TestObserveOTelAndPrometheusPathsRecordTheSameSeries.)
func TestDocTestNamesExist(t *testing.T) {
	root := testkit.RepoRoot(t)
	defined := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				defined[fn.Name.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	tests := map[string]bool{}
	for _, doc := range readDocs(t, root) {
		for _, m := range citedTest.FindAllStringSubmatch(doc.text, -1) {
			found++
			if strings.HasPrefix(m[1], "Test") {
				tests[m[1]] = true
			}
			if !defined[m[1]] && historicalTests[m[1]] != doc.rel {
				t.Errorf("%s: cites %s, which no _test.go file defines", doc.rel, m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("no test names found in the docs; the pattern is broken")
	}
	// The docs say what is tested in a "how it is tested" section per area; a test name is
	// cited only where a reader would run that one proof, so every rename is not a docs change.
	if len(tests) > maxCitedTests {
		t.Errorf("the docs cite %d distinct tests, more than %d: name the package or the make target instead", len(tests), maxCitedTests)
	}
}

// maxCitedTests bounds the distinct test names the docs cite.
const maxCitedTests = 50
