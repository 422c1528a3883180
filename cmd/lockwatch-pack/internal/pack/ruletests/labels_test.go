package ruletests

import (
	"errors"
	"maps"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
)

// TestSelectorLabels checks the series the scenarios write for a configured selector: the
// selected labels pass every matcher, keeping the scenario's own value where it matches, and
// each unselected label set fails exactly one matcher, so a rule that lost any one matcher
// selects one of them.
func TestSelectorLabels(t *testing.T) {
	base := map[string]string{"job": "app", "instance": "app-1:8080", "lock_namespace": "scheduler"}
	tests := []struct {
		selector string
		want     map[string]string // the labels the selector must change or add
	}{
		{``, nil},
		{`job="workers"`, map[string]string{"job": "workers"}},
		{`job=~"workers|schedulers"`, map[string]string{"job": "workers"}},
		{`job=~"app|workers"`, nil},
		{`job=~"team-.+"`, map[string]string{"job": "team-aapp"}},
		{`cluster="eu1", env!="dev"`, map[string]string{"cluster": "eu1"}},
		{`env=~"prod|staging", job!~"batch.*"`, map[string]string{"env": "prod"}},
		{`lock_namespace=~"billing:.*"`, map[string]string{"lock_namespace": "billing:scheduler"}},
		{`instance!=""`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			s, err := parseSelector("selectors.library", tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.selected(base)
			if err != nil {
				t.Fatal(err)
			}
			want := with(base)
			for k, v := range tt.want {
				want[k] = v
			}
			if !maps.Equal(got, want) {
				t.Errorf("selected %v, want %v", got, want)
			}
			if !matchesAll(s.matchers, got) {
				t.Errorf("selected %v does not match %s", got, tt.selector)
			}
			unselected, err := s.unselected(base)
			if err != nil {
				t.Fatal(err)
			}
			if len(unselected) != len(s.matchers) {
				t.Fatalf("%d unselected label sets for %d matchers", len(unselected), len(s.matchers))
			}
			for i, u := range unselected {
				for j, m := range s.matchers {
					if fails := !m.Matches(u[m.Name]); fails != (i == j) {
						t.Errorf("unselected set %d %v: matcher %s fails %v", i, u, m, fails)
					}
				}
			}
		})
	}
}

func matchesAll(ms []*labels.Matcher, lbls map[string]string) bool {
	for _, m := range ms {
		if !m.Matches(lbls[m.Name]) {
			return false
		}
	}
	return true
}

// TestSelectorWithoutValues names the selector when no series can satisfy it.
func TestSelectorWithoutValues(t *testing.T) {
	s, err := parseSelector("selectors.exporter", `job="a", job="b"`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.selected(map[string]string{"job": "lock-exporter"})
	if !errors.Is(err, ErrNoLabelValue) || err.Error() != "selectors.exporter: no label value found for label job" {
		t.Errorf("got %v", err)
	}
}
