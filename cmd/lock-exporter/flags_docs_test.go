package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// flagsTableRow is a row of docs/exporter.md's flags table: | `--flag …` | default | meaning |.
var flagsTableRow = regexp.MustCompile("(?m)^\\| (`--[^|]+)\\|([^|]*)\\|")

// docFlagName is one flag named in a row's first cell (a row may name two, or a value after it).
var docFlagName = regexp.MustCompile("`--([a-z0-9.-]+)")

// documentedFlags reads the flags table of docs/exporter.md's "## Flags" section: each flag
// with the default cell of its row, trimmed of its backquotes.
func documentedFlags(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), "docs", "exporter.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Flags\n")
	if start < 0 {
		t.Fatal("docs/exporter.md: no \"## Flags\" section")
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	flags := map[string]string{}
	for _, row := range flagsTableRow.FindAllStringSubmatch(section, -1) {
		for _, name := range docFlagName.FindAllStringSubmatch(row[1], -1) {
			flags[name[1]] = strings.Trim(strings.TrimSpace(row[2]), "`")
		}
	}
	if len(flags) < 20 {
		t.Fatalf("docs/exporter.md: only %d flags found in the flags table; the pattern is broken", len(flags))
	}
	return flags
}

// sameDefault compares a documented default with the flag's: literally, as equal durations
// (`5m` against 5m0s), as a one-element list (`:9866` against [:9866]), or as the value 0 stands
// for where the flag's usage says so ("(0: 4)"), since that is the default a user gets.
func sameDefault(doc string, f *pflag.Flag) bool {
	if doc == f.DefValue || "["+doc+"]" == f.DefValue {
		return true
	}
	if f.DefValue == "0" && strings.Contains(f.Usage, "(0: "+doc+")") {
		return true
	}
	d, errDoc := time.ParseDuration(doc)
	v, errFlag := time.ParseDuration(f.DefValue)
	return errDoc == nil && errFlag == nil && d == v
}

// TestFlagsTableMatchesTheServer: docs/exporter.md's flags table lists every flag of the
// server's flag set and no other, and a default the table writes as a literal (`1000`) is the
// default --help prints, so a new, renamed or re-defaulted flag fails here, not in a reader's
// shell. Descriptive defaults (system roots, off) are left to the reader.
func TestFlagsTableMatchesTheServer(t *testing.T) {
	documented := documentedFlags(t)
	var sf serveFlags
	fs := newFlagSet("lock-exporter", &settings{cfg: exporterconfig.Defaults()}, sf.define)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		doc, ok := documented[f.Name]
		if !ok {
			t.Errorf("--%s is a flag of lock-exporter but has no row in docs/exporter.md's flags table", f.Name)
			return
		}
		delete(documented, f.Name)
		literal := doc != "" && !strings.Contains(doc, " ") && doc != "off"
		if literal && !sameDefault(doc, f) {
			t.Errorf("--%s: docs/exporter.md says the default is %q, --help says %q", f.Name, doc, f.DefValue)
		}
	})
	for name := range documented {
		t.Errorf("docs/exporter.md's flags table lists --%s, which lock-exporter does not define", name)
	}
}
