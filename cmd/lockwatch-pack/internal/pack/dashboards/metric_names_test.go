package dashboards

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.uber.org/goleak"

	"github.com/lockwatch/lockwatch/cmd/internal/testharness/metricnamestest"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestMain checks for leaked goroutines: the metric-name check runs the lease
// library and the exporter against a real redis-server.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ruleOutput is what the generated rules put into Prometheus: the series the
// recording rules record and the names of the alerts (which become ALERTS
// series while pending or firing).
type ruleOutput struct {
	records, alerts []string
}

func rulesFor(t *testing.T, cfg packconfig.Config) ruleOutput {
	t.Helper()
	files, err := rules.Build(cfg)
	if err != nil {
		t.Fatalf("rules.Build: %v", err)
	}
	var out ruleOutput
	for r := range rules.All(files) {
		if r.Record != "" {
			out.records = append(out.records, r.Record)
		}
		if r.Alert != "" && !slices.Contains(out.alerts, r.Alert) {
			out.alerts = append(out.alerts, r.Alert)
		}
	}
	if len(out.records) == 0 || len(out.alerts) == 0 {
		t.Fatalf("the rules record %d series and define %d alerts; the check needs both", len(out.records), len(out.alerts))
	}
	return out
}

// TestMetricNamesExist checks every metric name a dashboard query reads: it
// must be registered by the lease library or the exporter (gathered from
// their real registries by cmd/internal/testharness/metricnamestest), or recorded by the rules
// generated from the same config. ALERTS must select at least one alert the
// rules define.
func TestMetricNamesExist(t *testing.T) {
	registered := metricnamestest.Gathered(t)
	for variant, out := range outputs(t) {
		rules := rulesFor(t, out.cfg)
		for _, name := range slices.Sorted(maps.Keys(out.files)) {
			d := decode(t, name, out.files[name])
			for _, q := range append(panelQueries(d), variableQueries(t, d)...) {
				exprs := parsed(t, q)
				if len(exprs) == 0 {
					continue
				}
				checkNames(t, variant+": "+q.where, exprs[0], registered, rules)
			}
		}
	}
}

// checkNames reports every name e reads that nothing produces.
func checkNames(t reporter, where string, e parser.Expr, registered map[string]bool, rules ruleOutput) {
	for _, metric := range metricNames(t, where, e) {
		switch {
		case metric == metricAlerts:
			checkAlertsSelector(t, where, e, rules.alerts)
		case slices.Contains(rules.records, metric):
		case registered[metric]:
		default:
			t.Errorf("%s: %s is neither registered by the library or the exporter nor recorded by the rules", where, metric)
		}
	}
}

// TestCheckNamesCatchesUnknownNames feeds the name check bad queries, so a
// check that silently stopped working would fail here.
func TestCheckNamesCatchesUnknownNames(t *testing.T) {
	registered := map[string]bool{"lock_held": true, "lock_keys": true, "lock_renewals_total": true}
	rules := ruleOutput{records: []string{"job_lock_namespace:lock_not_owned:ratio_rate5m"}, alerts: []string{"LockKeyWithoutTTL"}}
	tests := []struct {
		expr string
		ok   bool
	}{
		{`sum(rate(lock_renewals_total[1m]))`, true},
		{`job_lock_namespace:lock_not_owned:ratio_rate5m`, true},
		{`{__name__=~"lock_held|lock_keys"}`, true},
		{`ALERTS{alertname=~"Lock.*"}`, true},
		{`sum(rate(lock_renewal_total[1m]))`, false},
		{`job_lock_namespace:lock_not_owned:ratio_rate1m`, false},
		{`{__name__=~"lock_held|lock_kyes"}`, false},
		{`{__name__=~"lock_.*"}`, false},
		{`ALERTS{alertname=~"Redis.*"}`, false},
		{`ALERTS`, false},
	}
	for _, tt := range tests {
		e, err := promql.ParseExpr(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		var rec recorder
		checkNames(&rec, tt.expr, e, registered, rules)
		if got := len(rec) == 0; got != tt.ok {
			t.Errorf("%s: check passed = %v, want %v: %q", tt.expr, got, tt.ok, rec)
		}
	}
}

// checkAlertsSelector requires every alertname matcher on ALERTS to match at
// least one generated alert.
func checkAlertsSelector(t reporter, where string, e parser.Expr, alertNames []string) {
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || vs.Name != metricAlerts {
			return nil
		}
		matched := false
		for _, m := range vs.LabelMatchers {
			if m.Name != labels.AlertName {
				continue
			}
			matched = slices.ContainsFunc(alertNames, m.Matches)
			if !matched {
				t.Errorf("%s: %s matches none of the generated alerts %v", where, m, alertNames)
			}
		}
		if !matched {
			t.Errorf("%s: ALERTS without an alertname matcher for the lockwatch alerts", where)
		}
		return nil
	})
}
