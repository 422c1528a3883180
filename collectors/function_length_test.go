package collectors

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxEngineFunctionLines is the most lines a function of the exporter's engine may span, from
// its func keyword to its closing brace: a longer one does several things, and the next reader
// has to hold them all at once.
const maxEngineFunctionLines = 60

// TestEngineFunctionsAreShort reads the non-test Go files of collectors and of every package
// under collectors/internal, and fails naming each function (or method) longer than
// maxEngineFunctionLines.
func TestEngineFunctionsAreShort(t *testing.T) {
	files := engineSourceFiles(t)
	if len(files) == 0 {
		t.Fatal("no source files found under . and internal/")
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			from, to := fset.Position(fn.Pos()), fset.Position(fn.Body.Rbrace)
			if lines := to.Line - from.Line + 1; lines > maxEngineFunctionLines {
				t.Errorf("%s:%d: %s is %d lines, more than %d: split it into named steps",
					path, from.Line, funcName(fn), lines, maxEngineFunctionLines)
			}
		}
	}
}

// engineSourceFiles lists the non-test Go files of this package and of the packages under
// internal/.
func engineSourceFiles(t *testing.T) []string {
	t.Helper()
	own, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range own {
		if !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
	}
	err = filepath.WalkDir("internal", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// funcName is fn's name, with its receiver's type for a method: (*indexer).scan.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		recv, star = s.X, "*"
	}
	if g, ok := recv.(*ast.IndexExpr); ok {
		recv = g.X
	}
	if g, ok := recv.(*ast.IndexListExpr); ok {
		recv = g.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + star + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
