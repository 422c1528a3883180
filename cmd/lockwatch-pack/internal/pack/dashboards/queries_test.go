package dashboards

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// query is one PromQL expression found in a dashboard.
type query struct {
	where   string // dashboard › panel › refId, for failure messages
	expr    string
	instant bool
}

// panelQueries returns every target expression of d.
func panelQueries(d dashboard.Dashboard) []query {
	var qs []query
	for _, p := range panels(d) {
		for _, target := range p.Targets {
			pq, ok := target.(*prometheus.Dataquery)
			if !ok {
				continue // TestStrictDecodeAndValidate reports it
			}
			qs = append(qs, query{
				where:   fmt.Sprintf("%s › %s › %s", *d.Uid, *p.Title, deref(pq.RefId)),
				expr:    pq.Expr,
				instant: pq.Instant != nil && *pq.Instant,
			})
		}
	}
	return qs
}

// labelValues matches Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// queryResult matches Grafana's query_result(expr) variable query.
var queryResult = regexp.MustCompile(`^query_result\((.+)\)$`)

// variableExpr is the PromQL a variable query runs: label_values' selector or query_result's
// expression.
func variableExpr(q string) (string, bool) {
	if m := labelValues.FindStringSubmatch(q); m != nil {
		return m[1], true
	}
	if m := queryResult.FindStringSubmatch(q); m != nil {
		return m[1], true
	}
	return "", false
}

// variableQueries returns the series selector of every query variable.
func variableQueries(t *testing.T, d dashboard.Dashboard) []query {
	t.Helper()
	var qs []query
	for _, v := range d.Templating.List {
		if v.Type != dashboard.VariableTypeQuery {
			continue
		}
		where := fmt.Sprintf("%s › variable %s", *d.Uid, v.Name)
		if v.Query == nil || v.Query.String == nil {
			t.Errorf("%s: no query", where)
			continue
		}
		expr, ok := variableExpr(*v.Query.String)
		if !ok {
			t.Errorf("%s: %q is not label_values(selector, label) or query_result(expr)", where, *v.Query.String)
			continue
		}
		qs = append(qs, query{where: where, expr: expr, instant: true})
	}
	return qs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// variableRef matches $name and ${name} references, as Grafana interpolates them.
var variableRef = regexp.MustCompile(`\$\{([a-zA-Z0-9_]+)\}|\$([a-zA-Z0-9_]+)`)

// interpolate replaces every variable reference the way Grafana would with
// the given values, and reports references to anything else.
func interpolate(expr string, values map[string]string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2]
		v, ok := values[name]
		if !ok {
			unknown = append(unknown, ref)
			return ref
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %v", unknown)
	}
	return out, nil
}

// interpolations are the ways Grafana fills the variables in: every
// multi-value variable on "All" (the .* all-value), and on two selected values,
// which Grafana renders as a regex alternation. Grafana's own interval
// variables get typical values.
var interpolations = map[string]map[string]string{
	"all selected": {
		"__rate_interval": "1m", "__range": "3h", "__interval": "15s",
		varJob: ".+", varInstance: ".+", varNamespace: ".+", varExporterJob: ".+",
		"cluster": ".*", "region": ".*",
	},
	"two selected": {
		"__rate_interval": "2m", "__range": "1d", "__interval": "1m",
		varJob: "(workers|scheduler)", varInstance: `(10\\.0\\.0\\.1:9100|10\\.0\\.0\\.2:9100)`,
		varNamespace: "(jobs|runs)", varExporterJob: "(lock-exporter|lock-exporter-eu)",
		"cluster": "(eu1|us1)", "region": "(eu|us)",
	},
}

var promql = parser.NewParser(parser.Options{})

// parsed returns q's expression as Prometheus would receive it under each
// interpolation.
func parsed(t *testing.T, q query) []parser.Expr {
	t.Helper()
	var exprs []parser.Expr
	for _, name := range slices.Sorted(maps.Keys(interpolations)) {
		s, err := interpolate(q.expr, interpolations[name])
		if err != nil {
			t.Errorf("%s: %v in %q", q.where, err, q.expr)
			continue
		}
		e, err := promql.ParseExpr(s)
		if err != nil {
			t.Errorf("%s (%s): does not parse: %v\n%s", q.where, name, err, s)
			continue
		}
		exprs = append(exprs, e)
	}
	return exprs
}

// metricNames returns the metric names an expression reads, including those
// named only through a __name__ matcher such as {__name__=~"a|b"}.
func metricNames(t reporter, where string, e parser.Expr) []string {
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if vs.Name != "" {
			names = append(names, vs.Name)
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != labels.MetricName {
				continue
			}
			switch m.Type {
			case labels.MatchEqual:
				names = append(names, m.Value)
			case labels.MatchRegexp:
				if !regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\|[a-zA-Z_:][a-zA-Z0-9_:]*)*$`).MatchString(m.Value) {
					t.Errorf("%s: __name__ regex %q is not a plain list of names; the name check cannot follow it", where, m.Value)
				}
				names = append(names, strings.Split(m.Value, "|")...)
			default:
				t.Errorf("%s: negative __name__ matcher %s", where, m)
			}
		}
		return nil
	})
	return names
}

// TestQueriesParse parses every panel and variable query of every dashboard
// after Grafana-style interpolation.
func TestQueriesParse(t *testing.T) {
	for f := range dashboardFiles(t) {
		d := decode(t, f.name, f.raw)
		qs := append(panelQueries(d), variableQueries(t, d)...)
		if len(qs) == 0 {
			t.Fatalf("%s/%s: no queries found", f.variant, f.name)
		}
		for _, q := range qs {
			parsed(t, q)
		}
	}
}

// TestInterpolateRejectsUnknownVariables keeps the check above honest: a typo
// in a variable name must fail, not slip through as a literal.
func TestInterpolateRejectsUnknownVariables(t *testing.T) {
	values := interpolations["all selected"]
	for _, expr := range []string{
		`up{lock_namespace=~"$lock_namespce"}`,
		`rate(x[$__rate_intervall])`,
		`up{job=~"${jobs}"}`,
	} {
		if _, err := interpolate(expr, values); err == nil {
			t.Errorf("interpolate(%q) accepted an unknown variable", expr)
		}
	}
	got, err := interpolate(`rate(x{job=~"${job}", i=~"$instance"}[$__rate_interval])`, values)
	if err != nil || got != `rate(x{job=~".+", i=~".+"}[1m])` {
		t.Errorf("interpolate = %q, %v", got, err)
	}
}
