package rules

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, err := Generate(packconfig.Default())
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Fatalf("%s differs between two runs", a[i].Path)
			}
		}
	}
}

// TestOverridesChangeOutput applies one override at a time and checks the effect on the rules.
func TestOverridesChangeOutput(t *testing.T) {
	defaults, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		override string
		check    func(t *testing.T, files []RuleFile, text string)
	}{
		{"fast tier threshold", "alerts:\n  not_owned_ratio:\n    fast:\n      threshold: 0.2\n",
			func(t *testing.T, _ []RuleFile, text string) {
				mustContain(t, text,
					"job_lock_namespace:lock_not_owned:ratio_rate1h > 0.2",
					"job_lock_namespace:lock_not_owned:ratio_rate5m > 0.2",
					"above 20% over the last 5m",
				)
			}},
		{"traffic guard off", "alerts:\n  renewal_failure_ratio:\n    min_operations: 0\n",
			func(t *testing.T, files []RuleFile, _ string) {
				for _, r := range alertRules(files, AlertRenewalFailureRatioHigh) {
					if strings.Contains(r.Expr.String(), "lock_renewals:rate") {
						t.Errorf("guard still present: %s", r.Expr)
					}
				}
			}},
		{"for and severity", "alerts:\n  key_without_ttl:\n    for: 1h\n    severity: critical\n",
			func(t *testing.T, files []RuleFile, _ string) {
				r := alertRules(files, AlertKeyWithoutTTL)[0]
				if r.For.String() != "1h" || r.Labels["severity"] != "critical" {
					t.Errorf("for %s severity %s", r.For, r.Labels["severity"])
				}
			}},
		{"disabled alert", "alerts:\n  exporter_absent:\n    disabled: true\n",
			func(t *testing.T, files []RuleFile, text string) {
				if n := len(alertRules(files, AlertExporterAbsent)); n != 0 {
					t.Errorf("%d LockExporterAbsent rules left", n)
				}
				mustContain(t, text, AlertExporterRedisDown)
			}},
		{"alert window adds a recording window", "alerts:\n  wait_p99:\n    long: 2h\n",
			func(t *testing.T, _ []RuleFile, text string) {
				mustContain(t, text,
					"- name: lockwatch-recording-2h",
					"job_lock_namespace:lock_acquire_wait_seconds:p99_rate2h > 1",
					"job_lock_namespace:lock_acquires:rate2h * 7200 >= 100",
				)
			}},
		{"recording windows", "recording_windows: [1m]\n",
			func(t *testing.T, files []RuleFile, text string) {
				mustContain(t, text, "- name: lockwatch-recording-1m")
				// The windows the alerts read are still recorded.
				mustContain(t, text, "- name: lockwatch-recording-6h")
			}},
		{"runbook base URL", "runbook_base_url: https://runbooks.example.com/lockwatch\n",
			func(t *testing.T, files []RuleFile, text string) {
				for r := range All(files) {
					if r.Alert != "" && !strings.HasPrefix(r.Annotations.RunbookURL, "https://runbooks.example.com/lockwatch#lock") {
						t.Errorf("%s runbook_url %s", r.Alert, r.Annotations.RunbookURL)
					}
				}
			}},
		{"selectors", "selectors:\n  library: job=~\"workers|schedulers\", cluster=\"eu1\"\n  exporter: job=\"lock-exporter\"\n",
			func(t *testing.T, files []RuleFile, _ string) {
				checkSelectors(t, files,
					[]string{`job=~"workers|schedulers"`, `cluster="eu1"`}, []string{`job="lock-exporter"`})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := packconfig.Parse([]byte(tt.override))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			var text strings.Builder
			for i := range out {
				text.Write(out[i].Data)
				changed = changed || !bytes.Equal(out[i].Data, defaults[i].Data)
			}
			if !changed {
				t.Fatal("the override did not change the output")
			}
			files, err := Build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, files, text.String())
		})
	}
}

func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func alertRules(files []RuleFile, name string) []Rule {
	var rules []Rule
	for r := range All(files) {
		if r.Alert == name {
			rules = append(rules, *r)
		}
	}
	return rules
}

// libraryMetrics are the lease library's series the rules read; every other raw metric comes
// from the exporter. Recorded series (level:metric:operations) carry no selector of their own.
var libraryMetrics = []string{
	"lock_renewals_total", "lock_releases_total", "lock_abandoned_total",
	"lock_acquire_wait_seconds_bucket", "lock_acquire_wait_seconds_count", "lock_held_oldest_seconds",
	"lock_fenced_writes_total",
}

// checkSelectors walks every parsed expression and checks that each raw metric selector
// carries the configured matchers of its source.
func checkSelectors(t *testing.T, files []RuleFile, library, exporter []string) {
	t.Helper()
	seen := 0
	for r := range All(files) {
		parser.Inspect(r.Expr, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || strings.Contains(vs.Name, ":") {
				return nil
			}
			want := exporter
			if slices.Contains(libraryMetrics, vs.Name) {
				want = library
			}
			seen++
			for _, w := range want {
				if !hasMatcher(vs.LabelMatchers, w) {
					t.Errorf("%s%s: selector %s lacks %s", r.Record, r.Alert, vs, w)
				}
			}
			return nil
		})
	}
	if seen == 0 {
		t.Fatal("no raw metric selectors found")
	}
}

func hasMatcher(ms []*labels.Matcher, want string) bool {
	for _, m := range ms {
		if m.String() == want {
			return true
		}
	}
	return false
}

// TestAllYieldsEveryRuleInOrder: All walks files, groups and rules in order, stops when the loop
// breaks, and yields pointers into the groups so an edit sticks.
func TestAllYieldsEveryRuleInOrder(t *testing.T) {
	files := []RuleFile{
		{Groups: []Group{{Rules: []Rule{{Record: "a"}, {Record: "b"}}}, {Rules: []Rule{{Alert: "C"}}}}},
		{Groups: []Group{{Rules: []Rule{{Alert: "D"}}}}},
	}
	var names []string
	for r := range All(files) {
		names = append(names, r.Record+r.Alert)
		if r.Alert == "C" {
			r.Alert = "edited"
			break
		}
	}
	if want := []string{"a", "b", "C"}; !slices.Equal(names, want) {
		t.Errorf("yielded %v, want %v", names, want)
	}
	if files[0].Groups[1].Rules[0].Alert != "edited" {
		t.Error("an edit through the yielded pointer was lost")
	}
}
