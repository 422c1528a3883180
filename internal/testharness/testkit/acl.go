package testkit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// ACLUser is the exporter's least-privilege Redis user as docs/exporter.md documents it.
const ACLUser = "lock-exporter"

// DocumentedACL returns the rules of the `user lock-exporter …` line of docs/exporter.md, with
// its placeholder password (>CHANGE-ME) replaced by password: tests run the exporter under
// exactly what users copy.
func DocumentedACL(tb testing.TB, password string) []string {
	tb.Helper()
	doc, err := os.ReadFile(filepath.Join(RepoRoot(tb), "docs", "exporter.md"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		rest, ok := strings.CutPrefix(line, "user "+ACLUser+" ")
		if !ok {
			continue
		}
		rules := strings.Fields(rest)
		i := slices.Index(rules, ">CHANGE-ME")
		if i < 0 {
			tb.Fatalf("documented ACL line has no >CHANGE-ME password: %q", line)
		}
		rules[i] = ">" + password
		return rules
	}
	tb.Fatalf("docs/exporter.md has no `user %s …` ACL line", ACLUser)
	return nil
}

// SetACL creates the exporter's user on one running server (ACL SETUSER is per node) with
// exactly rules. ACL SETUSER merges a selector split over several arguments ("(+get",
// "%R~*:fence)"), as an ACL file line is split.
func SetACL(tb testing.TB, s *redistest.Server, rules []string) {
	tb.Helper()
	args := []any{"ACL", "SETUSER", ACLUser, "reset"}
	for _, r := range rules {
		args = append(args, r)
	}
	if _, err := s.Do(context.Background(), args...); err != nil {
		tb.Fatalf("ACL SETUSER on %s: %v", s.Addr, err)
	}
}
