package dashboards

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// lintFile is dashboards/.lint, grafana/dashboard-linter's configuration beside the dashboards,
// as the mixins ship it: per rule, the findings excluded by design, each with its reason.
type lintFile struct {
	Exclusions map[string]struct {
		Reason  string `yaml:"reason"`
		Entries []struct {
			Reason    string `yaml:"reason"`
			Dashboard string `yaml:"dashboard"`
			Panel     string `yaml:"panel"`
		} `yaml:"entries"`
	} `yaml:"exclusions"`
}

// upstreamFinding is one (dashboard title, panel title) the upstream rule objects to.
type upstreamFinding struct{ dashboard, panel string }

// upstreamJobInstance runs dashboard-linter's target-job-rule and target-instance-rule as the
// linter states them, without this project's exceptions: every selector must match
// job=~"$job" and instance=~"$instance". lintTargetJob and lintTargetInstance check what the
// dashboards do instead; the difference is exactly what .lint excludes.
func upstreamJobInstance(t *testing.T, f dashboardFile) map[string]map[upstreamFinding]bool {
	t.Helper()
	d := decode(t, f.name, f.raw)
	found := map[string]map[upstreamFinding]bool{"target-job-rule": {}, "target-instance-rule": {}}
	for _, p := range panels(d) {
		for _, target := range p.Targets {
			pq, ok := target.(*prometheus.Dataquery)
			if !ok {
				continue
			}
			expr, err := interpolate(pq.Expr, interpolations["all selected"])
			if err != nil {
				t.Fatal(err)
			}
			// Parse with the variables left in, as the linter checks the matcher values.
			raw := strings.NewReplacer("$__rate_interval", "1m", "$__range", "1h", "$__interval", "1m").Replace(pq.Expr)
			e, err := promql.ParseExpr(raw)
			if err != nil {
				t.Fatalf("%s: %v (%s)", *p.Title, err, expr)
			}
			at := upstreamFinding{deref(d.Title), deref(p.Title)}
			eachSelector(e, func(vs *parser.VectorSelector) {
				if !hasMatcher(vs, "job", "$"+varJob) {
					found["target-job-rule"][at] = true
				}
				if !hasMatcher(vs, "instance", "$"+varInstance) {
					found["target-instance-rule"][at] = true
				}
			})
		}
	}
	return found
}

// TestLintFileMatchesFindings reads dashboards/.lint and checks it against the committed
// dashboards: every upstream finding of the excluded rules is listed, every listed entry matches
// a finding (no stale exclusion hides a future regression), every rule and entry gives its
// reason, and no other rule is excluded.
func TestLintFileMatchesFindings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(t), Dir, ".lint"))
	if err != nil {
		t.Fatal(err)
	}
	var lf lintFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&lf); err != nil {
		t.Fatalf("dashboards/.lint: %v", err)
	}
	found := map[string]map[upstreamFinding]bool{}
	for f := range dashboardFiles(t) {
		if f.variant != "committed" {
			continue
		}
		for rule, fs := range upstreamJobInstance(t, f) {
			if found[rule] == nil {
				found[rule] = map[upstreamFinding]bool{}
			}
			for k := range fs {
				found[rule][k] = true
			}
		}
	}
	for rule, ex := range lf.Exclusions {
		if _, ok := found[rule]; !ok {
			t.Errorf(".lint excludes %s, which the dashboards are meant to pass", rule)
			continue
		}
		if strings.TrimSpace(ex.Reason) == "" || len(ex.Entries) == 0 {
			t.Errorf(".lint %s: want a reason and entries (a rule excluded wholesale hides regressions)", rule)
		}
		listed := map[upstreamFinding]bool{}
		for _, e := range ex.Entries {
			at := upstreamFinding{e.Dashboard, e.Panel}
			listed[at] = true
			if strings.TrimSpace(e.Reason) == "" {
				t.Errorf(".lint %s %v: no reason", rule, at)
			}
			if !found[rule][at] {
				t.Errorf(".lint %s %v matches no finding: remove it", rule, at)
			}
		}
		for at := range found[rule] {
			if !listed[at] {
				t.Errorf("%s finding %v is not excluded in dashboards/.lint: fix the panel or add the exclusion with its reason", rule, at)
			}
		}
	}
	for rule, fs := range found {
		if _, ok := lf.Exclusions[rule]; !ok && len(fs) > 0 {
			var at []string
			for f := range fs {
				at = append(at, fmt.Sprint(f))
			}
			slices.Sort(at)
			t.Errorf("%s findings %v, and dashboards/.lint does not exclude the rule", rule, at)
		}
	}
}
