package dashboards

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/internal/testharness/metricnamestest"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// promqlBlock is a ```promql fenced block of a doc.
var promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")

// docQueries returns the queries of doc's promql blocks: a paragraph (lines up to a blank one,
// comment lines dropped) is one query when it parses as one, else each of its lines is one, an
// indented line continuing the query above, as the runbook lists several queries together.
func docQueries(t *testing.T, doc string) []query {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	for _, m := range promqlBlock.FindAllStringSubmatchIndex(string(data), -1) {
		block := string(data[m[2]:m[3]])
		firstLine := strings.Count(string(data[:m[2]]), "\n") + 1
		var para []string
		paraLine := 0
		flush := func() {
			defer func() { para = nil }()
			if len(para) == 0 {
				return
			}
			where := func(i int) string { return doc + ":" + strconv.Itoa(paraLine+i) }
			whole := strings.Join(para, "\n")
			if _, err := promql.ParseExpr(whole); err == nil || len(para) == 1 {
				qs = append(qs, query{where: where(0), expr: whole})
				return
			}
			// Several queries: an indented line continues the one above.
			for i, l := range para {
				if i > 0 && strings.TrimLeft(l, " \t") != l {
					qs[len(qs)-1].expr += "\n" + l
					continue
				}
				qs = append(qs, query{where: where(i), expr: l})
			}
		}
		for i, line := range strings.Split(block, "\n") {
			switch trimmed := strings.TrimSpace(line); {
			case trimmed == "":
				flush()
			case strings.HasPrefix(trimmed, "#"):
			default:
				if len(para) == 0 {
					paraLine = firstLine + i
				}
				para = append(para, line)
			}
		}
		flush()
	}
	if len(qs) == 0 {
		t.Fatalf("%s has no promql queries: has the block format changed?", doc)
	}
	return qs
}

// TestDocQueriesNameRealMetrics: every query the runbook and the metrics reference give an
// on-call engineer to paste into Prometheus parses, and every metric it reads is registered by the
// lease library or the exporter, or recorded by the default rules; a renamed metric or a typo in
// a doc fails here rather than in front of an empty graph during an incident.
func TestDocQueriesNameRealMetrics(t *testing.T) {
	registered := metricnamestest.Gathered(t)
	// Prometheus's own series for every target, which the runbook reads beside lockwatch's.
	registered["up"], registered["scrape_duration_seconds"] = true, true
	rules := rulesFor(t, packconfig.Default())
	for _, doc := range []string{"docs/runbook.md", "docs/metrics.md"} {
		for _, q := range docQueries(t, doc) {
			e, err := promql.ParseExpr(q.expr)
			if err != nil {
				t.Errorf("%s: does not parse: %v\n%s", q.where, err, q.expr)
				continue
			}
			checkNames(t, q.where, e, registered, rules)
		}
	}
}
