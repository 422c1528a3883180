package deploytest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// toolModfile is a `go tool -modfile=…` command in a doc.
var toolModfile = regexp.MustCompile(`go tool -modfile=\S+ \S+`)

// TestDocToolCommandsLeaveTheWorkspace: the checkout is a go.work workspace, and Go refuses
// -modfile in workspace mode ("go: -modfile cannot be used in workspace mode"), so every
// `go tool -modfile=…` command a doc gives a reader to run says GOWORK=off, as the Makefile does.
// A code span that only names the flag (README's layout table) is not a command.
func TestDocToolCommandsLeaveTheWorkspace(t *testing.T) {
	root := testkit.RepoRoot(t)
	for _, doc := range readDocs(t, root) {
		for i, line := range strings.Split(doc.text, "\n") {
			for _, loc := range toolModfile.FindAllStringIndex(line, -1) {
				before := line[:loc[0]]
				if strings.HasSuffix(before, "`") && strings.HasPrefix(line[loc[1]:], "`") {
					continue // `go tool -modfile=tools/go.mod` named in prose
				}
				if !strings.HasSuffix(strings.TrimRight(before, " "), "GOWORK=off") {
					t.Errorf("%s:%d: %q runs in workspace mode, where -modfile is refused; write GOWORK=off before it",
						doc.rel, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}
