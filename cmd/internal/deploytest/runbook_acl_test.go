package deploytest

import (
	"regexp"
	"strings"
	"testing"
)

// TestRunbookOperatorCommandsAreOutsideTheExporterACL: what the runbook sends to "an operator
// account" is what the exporter's least-privilege user (the ACL line of docs/exporter.md) may
// not run, and what it says that user may run, it may. (It sent INFO and TYPE to an operator
// account, both granted to the exporter's user for the index and for hash namespaces.)
func TestRunbookOperatorCommandsAreOutsideTheExporterACL(t *testing.T) {
	read := func(rel string) string { return readRepoFile(t, rel) }
	acl := regexp.MustCompile("(?s)```acl\n(.*?)```").FindStringSubmatch(read("docs/exporter.md"))
	if acl == nil {
		t.Fatal("docs/exporter.md: no ```acl block")
	}
	granted := map[string]bool{}
	for _, m := range regexp.MustCompile(`\+([a-z|]+)`).FindAllStringSubmatch(acl[1], -1) {
		granted[m[1]] = true
	}
	// allowed: a command of one or two words ("INFO", "CLIENT LIST") the ACL grants.
	allowed := func(cmd string) bool {
		words := strings.Fields(strings.ToLower(cmd))
		return granted[words[0]] || len(words) > 1 && granted[words[0]+"|"+words[1]]
	}
	runbook := read("docs/runbook.md")
	flat := strings.Join(strings.Fields(runbook), " ")
	redisCmd := regexp.MustCompile("`redis-cli ([A-Z]+(?: [A-Z]+)?)")
	var operatorOnly []string
	// Lines of the sh blocks whose comment sends them to an operator account.
	for _, m := range regexp.MustCompile(`(?m)^redis-cli ([A-Z]+(?: [A-Z]+)?)\b.*# operator account`).FindAllStringSubmatch(runbook, -1) {
		operatorOnly = append(operatorOnly, m[1])
	}
	// Sentences of the prose that do: "… with an operator account `redis-cli INFO stats` …".
	for _, m := range regexp.MustCompile(`operator account (.*?)\.(?: |$)`).FindAllStringSubmatch(flat, -1) {
		for _, c := range redisCmd.FindAllStringSubmatch(m[1], -1) {
			operatorOnly = append(operatorOnly, c[1])
		}
	}
	// The connecting paragraph: "… may run `PING`, … and nothing else; `X`, `Y` … need an
	// operator account".
	may, need, ok := strings.Cut(flat, "need an operator account")
	if !ok {
		t.Fatal(`docs/runbook.md: no "need an operator account"`)
	}
	may = may[strings.LastIndex(may, "may run"):]
	may, need, ok = strings.Cut(may, "nothing else;")
	if !ok {
		t.Fatal(`docs/runbook.md: no "may run … nothing else;" before "need an operator account"`)
	}
	span := regexp.MustCompile("`([A-Z][A-Z ]*)`")
	for _, m := range span.FindAllStringSubmatch(need, -1) {
		operatorOnly = append(operatorOnly, m[1])
	}
	for _, cmd := range operatorOnly {
		if allowed(cmd) {
			t.Errorf("docs/runbook.md sends %s to an operator account; the exporter's ACL (docs/exporter.md) grants it", cmd)
		}
	}
	if len(operatorOnly) == 0 {
		t.Fatal("no operator-only command found in docs/runbook.md; the patterns are broken")
	}
	for _, m := range span.FindAllStringSubmatch(may, -1) {
		if !allowed(m[1]) {
			t.Errorf("docs/runbook.md says the exporter's user may run %s; the ACL of docs/exporter.md does not grant it", m[1])
		}
	}
}
