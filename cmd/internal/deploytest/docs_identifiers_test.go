package deploytest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// publicPackages are the packages whose exported names the docs may cite as pkg.Name, by
// directory under the checkout root.
var publicPackages = []string{"lease", "collectors", "observe", "sqlfence"}

// qualifiedName is pkg.Name or pkg.Type.Member in prose or a code sample.
var qualifiedName = regexp.MustCompile(`\b(lease|collectors|observe|sqlfence)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)

// typeMember is Type.Member for the lease types a reader meets first, as the docs write methods
// and fields (`Client.Declare`, `Policy.ReleaseMode`, `Lease.Fence()`).
var typeMember = regexp.MustCompile(`\b(Client|Namespace|Lease|Policy|Options)\.([A-Z][A-Za-z0-9_]*)`)

// otherLibraries are Type.Member names the docs cite from other projects.
var otherLibraries = map[string]bool{
	"Client.AutoPipeline": true, // go-redis's
}

// TestDocIdentifiersExist: every exported name the README and docs cite from a public package
// (`lease.Abandon`, `collectors.Options`, `lease.Policy.Fencing`), and every method or field of
// lease's Client, Namespace, Lease, Policy and Options they name, exists; so a rename of the API
// without its docs fails here.
func TestDocIdentifiersExist(t *testing.T) {
	root := testkit.RepoRoot(t)
	api := map[string]map[string]bool{}
	for _, pkg := range publicPackages {
		api[pkg] = exportedNames(t, filepath.Join(root, pkg))
	}
	found := 0
	for _, doc := range readDocs(t, root) {
		for _, m := range qualifiedName.FindAllStringSubmatch(doc.text, -1) {
			found++
			name := m[2]
			if m[3] != "" && api[m[1]][m[2]+"."+m[3]] {
				name = m[2] + "." + m[3]
			}
			if !api[m[1]][name] {
				t.Errorf("%s: %s: package %s exports no %s", doc.rel, m[0], m[1], name)
			}
		}
		for _, m := range typeMember.FindAllStringSubmatch(doc.text, -1) {
			found++
			if !api["lease"][m[1]+"."+m[2]] && !otherLibraries[m[1]+"."+m[2]] {
				t.Errorf("%s: %s: lease.%s has no method or field %s", doc.rel, m[0], m[1], m[2])
			}
		}
	}
	if found == 0 {
		t.Fatal("no identifiers found in the docs; the patterns are broken")
	}
}

// testFunc is a test file's function the docs may cite (collectors.BenchmarkScrape).
var testFunc = regexp.MustCompile(`^(Test|Benchmark|Example|Fuzz)`)

// exportedNames lists a package's top-level names (functions, types, constants, variables)
// and, as Type.Name, its methods and struct fields; of test files only the test, benchmark,
// example and fuzz functions. Unexported names cannot match the docs' patterns.
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			if !strings.HasSuffix(path, "_test.go") {
				addDecl(names, decl)
			} else if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && testFunc.MatchString(fn.Name.Name) {
				names[fn.Name.Name] = true
			}
		}
	}
	return names
}

func addDecl(names map[string]bool, decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names[d.Name.Name] = true
			return
		}
		if recv := receiverType(d.Recv.List[0].Type); recv != "" {
			names[recv+"."+d.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				names[s.Name.Name] = true
				if st, ok := s.Type.(*ast.StructType); ok {
					for _, f := range st.Fields.List {
						for _, n := range f.Names {
							names[s.Name.Name+"."+n.Name] = true
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names[n.Name] = true
				}
			}
		}
	}
}

func receiverType(expr ast.Expr) string {
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	if id, ok := expr.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
