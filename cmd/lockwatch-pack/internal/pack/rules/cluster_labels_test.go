package rules

import (
	"slices"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestClusterLabelsReachEveryAggregation: with cluster_labels set, every aggregation and every
// on (…) matching in every rule keeps each cluster label, so no rule can merge or pair series of
// two clusters; without them the output has no trace of a cluster label.
func TestClusterLabelsReachEveryAggregation(t *testing.T) {
	for _, tt := range []struct {
		name   string
		labels []string
	}{
		{"none", []string{}},
		{"one", []string{"cluster"}},
		{"two", []string{"region", "cluster"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := packconfig.Default()
			cfg.ClusterLabels = tt.labels
			files, err := Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for r := range All(files) {
				checkGrouping(t, r.Record+r.Alert, r.Expr, tt.labels)
			}
		})
	}
}

func checkGrouping(t *testing.T, rule string, e parser.Expr, want []string) {
	t.Helper()
	has := func(grouping []string, what string) {
		for _, l := range want {
			if !slices.Contains(grouping, l) {
				t.Errorf("%s: %s %v lacks cluster label %s", rule, what, grouping, l)
			}
		}
		if len(want) == 0 && slices.Contains(grouping, "cluster") {
			t.Errorf("%s: %s %v names a cluster label although none is configured", rule, what, grouping)
		}
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.AggregateExpr:
			if n.Without {
				t.Errorf("%s: aggregation without (…) cannot be checked for cluster labels", rule)
			}
			has(n.Grouping, "aggregation by")
		case *parser.BinaryExpr:
			if n.VectorMatching != nil && n.VectorMatching.On {
				has(n.VectorMatching.MatchingLabels, "matching on")
			}
		}
		return nil
	})
}
