package e2e

import (
	"testing"
	"time"
)

// TestGrafanaInterpolation checks the panel check's model of Grafana without a Prometheus (it
// runs without LOCKWATCH_E2E): a wrong built-in or escape would make every panel query wrong in
// the same way, and an unknown variable must fail rather than pass through as text.
func TestGrafanaInterpolation(t *testing.T) {
	to := time.Unix(1_800_000_000, 0)
	tr := newTimeRange(to.Add(-15*time.Minute), to, 2*time.Second, 1000)
	// 900s over 1000 points is under the scrape interval: $__interval is the 2s scrape interval,
	// $__rate_interval max(2s + 2s, 4 × 2s).
	for name, want := range map[string]string{"__interval": "2s", "__rate_interval": "8s", "__range": "900s", "__range_s": "900", "__interval_ms": "2000"} {
		if got := tr.builtins[name]; got != want {
			t.Errorf("$%s = %q, want %q", name, got, want)
		}
	}
	if got := newTimeRange(to.Add(-6*time.Hour), to, 15*time.Second, 1000).builtins["__rate_interval"]; got != "60s" {
		t.Errorf("6h at 15s scrape: $__rate_interval = %q, want 60s (max(22s + 15s, 4 × 15s))", got)
	}
	values := map[string]string{"instance": selected([]string{"127.0.0.1:9100"}), "job": selected([]string{"a", "b.c"}), "__range": "900s"}
	got, err := interpolate(`up{instance=~"$instance", job=~"${job}"}[$__range]`, values)
	if want := `up{instance=~"127\\.0\\.0\\.1:9100", job=~"(a|b\\.c)"}[900s]`; err != nil || got != want {
		t.Errorf("interpolate = %q, %v; want %q", got, err, want)
	}
	if _, err := interpolate(`up{job=~"$jobs"}`, values); err == nil {
		t.Error("an unknown variable was interpolated")
	}
	texts := []string{queryResultText(map[string]string{"lock_namespace": "jobs"}, "1", 1800000000)}
	if got, err := applyRegex(texts, `/lock_namespace="([^"]+)"/`); err != nil || len(got) != 1 || got[0] != "jobs" {
		t.Errorf("query_result %q through the regex: %v, %v", texts, got, err)
	}
	for q, want := range map[string]variableQuery{
		`label_values(lock_held{job=~"$job"}, instance)`: {selector: `lock_held{job=~"$job"}`, label: "instance"},
		`label_values(job)`:               {label: "job"},
		`query_result(group by (x) (up))`: {expr: `group by (x) (up)`},
	} {
		if got, err := parseVariableQuery(q); err != nil || got != want {
			t.Errorf("parseVariableQuery(%q) = %+v, %v; want %+v", q, got, err, want)
		}
	}
}
