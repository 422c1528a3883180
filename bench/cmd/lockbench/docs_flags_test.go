package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFlagRow is a row of docs/performance.md's flags table: | `-flag` | default | use |.
var docFlagRow = regexp.MustCompile("(?m)^\\| `(-[a-z-]+)` \\| ([^|]+) \\|")

// zeroDefaults are how the flags table writes a flag whose default is its type's zero value,
// which -h does not print.
var zeroDefaults = map[string]bool{"false": true, "all": true, "–": true}

// TestPerformanceDocFlagsMatchHelp: every flag docs/performance.md's table lists is one of
// lockbench's flags, with the default lockbench -h prints, so a renamed flag or a changed
// default fails here rather than in a reader's shell.
func TestPerformanceDocFlagsMatchHelp(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := docFlagRow.FindAllStringSubmatch(string(doc), -1)
	if len(rows) == 0 {
		t.Fatal("docs/performance.md: no flags table rows found; the pattern is broken")
	}
	defaults := helpDefaults(t, lockbenchHelp(t))
	for _, row := range rows {
		name, want := row[1], strings.TrimSpace(row[2])
		got, ok := defaults[name]
		switch {
		case !ok:
			t.Errorf("docs/performance.md lists %s, which lockbench -h does not", name)
		case got == "" && !zeroDefaults[want]:
			t.Errorf("docs/performance.md gives %s the default %q; lockbench -h prints none (the zero value)", name, want)
		case got != "" && got != want:
			t.Errorf("docs/performance.md gives %s the default %q; lockbench -h prints %q", name, want, got)
		}
	}
}

// lockbenchHelp builds lockbench and returns what its -h prints.
func lockbenchHelp(t *testing.T) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lockbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// -h exits with status 0 or 2 depending on the Go version; the text is what matters.
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	return out
}

// helpDefaults maps each flag of a flag package usage text to its printed default ("" when the
// text prints none), without the quotes of a string default.
func helpDefaults(t *testing.T, help []byte) map[string]string {
	t.Helper()
	defaults := map[string]string{}
	current := ""
	sc := bufio.NewScanner(bytes.NewReader(help))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "  -"); ok {
			current = "-" + strings.Fields(name)[0]
			defaults[current] = ""
			continue
		}
		if i := strings.LastIndex(line, "(default "); current != "" && i >= 0 {
			defaults[current] = strings.Trim(strings.TrimSuffix(line[i+len("(default "):], ")"), `"`)
		}
	}
	if len(defaults) == 0 {
		t.Fatalf("no flags in lockbench -h:\n%s", help)
	}
	return defaults
}
