package pack_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// listedPackage is the part of `go list -json` this test reads.
type listedPackage struct {
	ImportPath string
	Name       string
	Imports    []string
}

// TestPublicPackagesExposeNoInternalTypes keeps the module's boundary honest: an exported
// function of a public package whose signature names a type of an internal package (as
// alerts.Build(packconfig.Config) once did) is API no one outside the module can call. For
// every public library package, the test reads its exported API with `go doc -all` and fails
// when it names an identifier of one of the internal packages it imports.
func TestPublicPackagesExposeNoInternalTypes(t *testing.T) {
	root := testkit.RepoRoot(t)
	checked := 0
	for _, p := range publicPackages(t, root) {
		var internal []string
		for _, imp := range p.Imports {
			if strings.Contains(imp, "/internal/") {
				internal = append(internal, regexp.QuoteMeta(imp[strings.LastIndex(imp, "/")+1:]))
			}
		}
		checked++
		if len(internal) == 0 {
			continue
		}
		doc := goCmd(t, root, "doc", "-all", p.ImportPath)
		named := regexp.MustCompile(`\b(` + strings.Join(internal, "|") + `)\.[A-Z]\w*`)
		for _, line := range strings.Split(doc, "\n") {
			if m := named.FindString(line); m != "" && !strings.HasPrefix(line, "    ") {
				t.Errorf("%s exports %q, which names %s of an internal package", p.ImportPath, strings.TrimSpace(line), m)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no public packages found")
	}
}

// publicPackages lists the module's library packages outside internal/ (commands and
// test-only directories have no API).
func publicPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(goCmd(t, root, "list", "-json=ImportPath,Name,Imports", "./...")))
	var public []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return public
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Name != "main" && !strings.Contains(p.ImportPath+"/", "/internal/") && len(p.Imports) > 0 {
			public = append(public, p)
		}
	}
}

func goCmd(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testkit.GoBinary(), args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
