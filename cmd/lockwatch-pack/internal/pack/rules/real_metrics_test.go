package rules

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/cmd/internal/testharness/metricnamestest"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRulesReadOnlyRealMetrics walks every parsed expression: each metric a selector names must
// be exposed by the lease library or the exporter (gathered from real registries against a real
// redis-server), or recorded by one of the rules.
func TestRulesReadOnlyRealMetrics(t *testing.T) {
	registered := metricnamestest.Gathered(t)
	files, err := Build(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for r := range All(files) {
		if r.Record != "" {
			recorded[r.Record] = true
		}
	}
	read := 0
	for r := range All(files) {
		parser.Inspect(r.Expr, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			read++
			if vs.Name == "" {
				t.Errorf("%s%s: selector %s has no metric name", r.Record, r.Alert, vs)
			} else if !registered[vs.Name] && !recorded[vs.Name] {
				t.Errorf("%s%s reads %s, which neither the library nor the exporter exposes and no rule records",
					r.Record, r.Alert, vs.Name)
			}
			return nil
		})
	}
	if read == 0 {
		t.Fatal("no selectors found in the rules")
	}
}
