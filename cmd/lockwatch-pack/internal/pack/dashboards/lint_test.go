package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// lintRules are grafana/dashboard-linter's rules: the default set of its
// lint/rules.go plus uneditable-dashboard-rule, each checked the way the
// linter checks it, with two deliberate exceptions written into the rule
// (dashboards/.lint excludes them for the upstream linter, and
// lint_file_test.go keeps that file and the findings in step):
//   - target-job-rule: exporter series filter on $exporter_job, the scrape job
//     of lock-exporter, not on $job, the applications' job; ALERTS series are
//     filtered by namespace only, so alerts of every job are listed.
//   - target-instance-rule: only the library's per-process series carry an
//     application instance; recording rules are summed over instances, and the
//     exporter's instance is the exporter.
//
// The lockwatch-* rules are this project's own: uid and file name, tags,
// grid layout, variables that something uses.
var lintRules = []lintRule{
	{"template-datasource-rule", lintTemplateDatasource},
	{"template-job-rule", func(r reporter, in lintInput) { lintTemplate(r, in, varJob, "Job") }},
	{"template-instance-rule", func(r reporter, in lintInput) { lintTemplate(r, in, varInstance, "Instance") }},
	{"template-label-promql-rule", lintTemplateLabelPromQL},
	{"template-on-time-change-reload-rule", lintTemplateReload},
	{"panel-datasource-rule", lintPanelDatasource},
	{"panel-title-description-rule", lintPanelTitleDescription},
	{"panel-units-rule", lintPanelUnits},
	{"panel-no-targets-rule", lintPanelNoTargets},
	{"target-promql-rule", forEachQuery(lintTargetPromQL)},
	{"target-rate-interval-rule", forEachQuery(lintTargetRateInterval)},
	{"target-job-rule", forEachQuery(lintTargetJob)},
	{"target-instance-rule", forEachQuery(lintTargetInstance)},
	{"target-counter-agg-rule", forEachQuery(lintTargetCounterAgg)},
	{"uneditable-dashboard-rule", lintUneditable},
	{"lockwatch-identity", lintIdentity},
	{"lockwatch-variables", lintVariableUse},
	{"lockwatch-layout", lintLayout},
}

type lintRule struct {
	name  string
	check func(reporter, lintInput)
}

// lintInput is one generated dashboard and the configuration it came from.
type lintInput struct {
	file     string
	raw      []byte
	d        dashboard.Dashboard
	clusters []string
}

func TestLintDashboards(t *testing.T) {
	for f := range dashboardFiles(t) {
		in := lintInput{file: f.name, raw: f.raw, d: decode(t, f.name, f.raw), clusters: f.cfg.ClusterLabels}
		for _, rule := range lintRules {
			t.Run(f.variant+"/"+f.name+"/"+rule.name, func(t *testing.T) {
				rule.check(t, in)
			})
		}
	}
}

func variable(d dashboard.Dashboard, name string) (dashboard.VariableModel, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return dashboard.VariableModel{}, false
}

// lintTemplateDatasource: a Prometheus datasource variable named datasource
// and labelled "Data source".
func lintTemplateDatasource(r reporter, in lintInput) {
	ds, ok := variable(in.d, varDatasource)
	switch {
	case !ok:
		r.Errorf("no datasource variable")
	case ds.Type != dashboard.VariableTypeDatasource || ds.Query == nil || deref(ds.Query.String) != "prometheus":
		r.Errorf("datasource variable is not a Prometheus datasource picker: %+v", ds)
	case deref(ds.Label) != "Data source":
		r.Errorf("datasource variable label %q, want %q", deref(ds.Label), "Data source")
	}
}

// lintTemplate: the job and instance variables query the datasource
// variable, are labelled in title case, multi-select, with All = .+.
func lintTemplate(r reporter, in lintInput, name, label string) {
	v, ok := variable(in.d, name)
	if !ok {
		r.Errorf("no %s variable", name)
		return
	}
	if v.Datasource == nil || deref(v.Datasource.Uid) != "${datasource}" {
		r.Errorf("%s variable does not query the datasource variable", name)
	}
	if v.Type != dashboard.VariableTypeQuery {
		r.Errorf("%s variable has type %s, want query", name, v.Type)
	}
	if deref(v.Label) != label {
		r.Errorf("%s variable label %q, want %q", name, deref(v.Label), label)
	}
	if v.Multi == nil || !*v.Multi || v.IncludeAll == nil || !*v.IncludeAll {
		r.Errorf("%s variable is not a multi-select with All", name)
	}
	if deref(v.AllValue) != ".+" {
		r.Errorf("%s variable All value %q, want .+", name, deref(v.AllValue))
	}
}

// lintTemplateLabelPromQL: every query variable is label_values(selector,
// label) with a selector that parses, or query_result(expr) with an
// expression that parses (its $__range filled in) and a /regex/ with one
// capture group that takes the value out of each result line.
func lintTemplateLabelPromQL(r reporter, in lintInput) {
	for _, v := range in.d.Templating.List {
		if v.Type != dashboard.VariableTypeQuery {
			continue
		}
		q := ""
		if v.Query != nil {
			q = deref(v.Query.String)
		}
		if m := queryResult.FindStringSubmatch(q); m != nil {
			expr, err := interpolate(m[1], map[string]string{"__range": "1h", varJob: ".+", varInstance: ".+", "cluster": ".*", "region": ".*"})
			if err == nil {
				_, err = promql.ParseExpr(expr)
			}
			if err != nil {
				r.Errorf("variable %s: query_result expression %q does not parse: %v", v.Name, m[1], err)
			}
			re := deref(v.Regex)
			if len(re) < 2 || re[0] != '/' || re[len(re)-1] != '/' || regexp.MustCompile(`\([^?]`).FindAllStringIndex(re, -1) == nil {
				r.Errorf("variable %s: query_result needs a /regex/ with a capture group, got %q", v.Name, re)
			}
			continue
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			r.Errorf("variable %s: %q is not label_values(selector, label) or query_result(expr)", v.Name, q)
			continue
		}
		if _, err := promql.ParseExpr(m[1]); err != nil {
			r.Errorf("variable %s: selector %q does not parse: %v", v.Name, m[1], err)
		}
	}
}

// lintTemplateReload: query variables reload when the time range changes.
func lintTemplateReload(r reporter, in lintInput) {
	for _, v := range in.d.Templating.List {
		if v.Type == dashboard.VariableTypeQuery &&
			(v.Refresh == nil || *v.Refresh != dashboard.VariableRefreshOnTimeRangeChanged) {
			r.Errorf("variable %s does not reload on time range change", v.Name)
		}
	}
}

// lintPanelDatasource: every datasource reference anywhere in the JSON is the
// variable, so no Grafana instance's datasource is baked in.
func lintPanelDatasource(r reporter, in lintInput) {
	var doc any
	if err := json.Unmarshal(in.raw, &doc); err != nil {
		r.Errorf("%v", err)
		return
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "datasource" {
					ref, ok := child.(map[string]any)
					if !ok || ref["uid"] != "${datasource}" || ref["type"] != "prometheus" {
						r.Errorf("%s.datasource = %v, want the datasource variable", path, child)
					}
					continue
				}
				walk(path+"."+k, child)
			}
		case []any:
			for i, child := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), child)
			}
		}
	}
	walk("$", doc)
}

func lintPanelTitleDescription(r reporter, in lintInput) {
	for _, p := range panels(in.d) {
		if deref(p.Title) == "" || p.Description == nil || len(*p.Description) < 40 {
			r.Errorf("panel %q lacks a title or a description a newcomer can use", deref(p.Title))
		}
	}
}

// grafanaUnits are the unit ids of Grafana's value formats
// (packages/grafana-data/src/valueFormats/categories.ts) a lockwatch panel
// may use; dashboard-linter accepts these among others.
var grafanaUnits = []string{"none", "short", "percent", "percentunit", "s", "ms", "ops", "reqps", "bool"}

func lintPanelUnits(r reporter, in lintInput) {
	for _, p := range panels(in.d) {
		unit := ""
		if p.FieldConfig != nil {
			unit = deref(p.FieldConfig.Defaults.Unit)
		}
		if !slices.Contains(grafanaUnits, unit) {
			r.Errorf("panel %q has unit %q, not one of %v", deref(p.Title), unit, grafanaUnits)
		}
	}
}

func lintPanelNoTargets(r reporter, in lintInput) {
	for _, p := range panels(in.d) {
		if len(p.Targets) == 0 {
			r.Errorf("panel %q has no targets", deref(p.Title))
		}
		raw, err := json.Marshal(p.Targets)
		if err != nil {
			r.Errorf("%v", err)
			return
		}
		var targets []struct {
			Expr string `json:"expr"`
		}
		if err := json.Unmarshal(raw, &targets); err != nil {
			r.Errorf("%v", err)
			return
		}
		for i, tg := range targets {
			if strings.TrimSpace(tg.Expr) == "" {
				r.Errorf("panel %q target %d has no expression", deref(p.Title), i)
			}
		}
	}
}

func lintUneditable(r reporter, in lintInput) {
	if in.d.Editable == nil || *in.d.Editable {
		r.Errorf("dashboard is editable; generated dashboards must say editable: false")
	}
}

// lintIdentity: uid equal to the file name, title, description, the common
// tag the links menu relies on, a refresh and a time range relative to now.
func lintIdentity(r reporter, in lintInput) {
	d := in.d
	if d.Uid == nil || *d.Uid+".json" != in.file {
		r.Errorf("uid %v does not match file name %s", deref(d.Uid), in.file)
	}
	if deref(d.Title) == "" || deref(d.Description) == "" {
		r.Errorf("dashboard title or description missing")
	}
	if !slices.Contains(d.Tags, commonTag) {
		r.Errorf("tags %v lack %q, which the links menu relies on", d.Tags, commonTag)
	}
	if deref(d.Refresh) == "" {
		r.Errorf("no refresh interval")
	}
	if d.Time == nil || !strings.HasPrefix(d.Time.From, "now-") || d.Time.To != "now" {
		r.Errorf("time range %+v is not relative to now", d.Time)
	}
}

// lintVariableUse: every variable but the datasource is a multi-select query
// variable on the datasource variable that some panel uses, and the cluster
// variables exist exactly when cluster labels are configured.
func lintVariableUse(r reporter, in lintInput) {
	raw, err := json.Marshal(in.d.Panels)
	if err != nil {
		r.Errorf("%v", err)
		return
	}
	used := string(raw)
	for _, l := range in.clusters {
		v, ok := variable(in.d, l)
		if !ok {
			r.Errorf("cluster label %s has no variable", l)
		} else if deref(v.AllValue) != allValueCluster {
			r.Errorf("cluster variable %s has All %q, want %q", l, deref(v.AllValue), allValueCluster)
		}
	}
	for _, v := range in.d.Templating.List {
		if v.Name == varDatasource {
			continue
		}
		known := slices.Contains([]string{varJob, varInstance, varNamespace, varExporterJob}, v.Name) ||
			slices.Contains(in.clusters, v.Name)
		if !known {
			r.Errorf("variable %s is neither a lockwatch variable nor a configured cluster label", v.Name)
		}
		if v.Datasource == nil || deref(v.Datasource.Uid) != "${datasource}" {
			r.Errorf("variable %s does not query the datasource variable", v.Name)
		}
		if v.Multi == nil || !*v.Multi || v.IncludeAll == nil || !*v.IncludeAll || deref(v.AllValue) == "" {
			r.Errorf("variable %s is not multi-select with a regex All", v.Name)
		}
		if !strings.Contains(used, "$"+v.Name) {
			r.Errorf("variable %s is not used by any panel", v.Name)
		}
	}
}

// lintLayout: unique panel ids and no panel outside the grid or on another.
func lintLayout(r reporter, in lintInput) {
	ids := map[uint32]string{}
	type rect struct{ x0, y0, x1, y1 uint32 }
	var placed []rect
	for _, p := range in.d.Panels {
		var id uint32
		var title string
		var pos *dashboard.GridPos
		if p.RowPanel != nil {
			id, title, pos = p.RowPanel.Id, deref(p.RowPanel.Title), p.RowPanel.GridPos
		} else {
			id, title, pos = deref32(p.Panel.Id), deref(p.Panel.Title), p.Panel.GridPos
		}
		if other, dup := ids[id]; dup || id == 0 {
			r.Errorf("panel %q has id %d, also used by %q", title, id, other)
		}
		ids[id] = title
		if pos == nil || pos.X+pos.W > 24 || pos.W == 0 || pos.H == 0 {
			r.Errorf("panel %q has grid position %+v outside the 24-column grid", title, pos)
			continue
		}
		rc := rect{pos.X, pos.Y, pos.X + pos.W, pos.Y + pos.H}
		for _, o := range placed {
			if rc.x0 < o.x1 && o.x0 < rc.x1 && rc.y0 < o.y1 && o.y0 < rc.y1 {
				r.Errorf("panel %q overlaps another panel", title)
			}
		}
		placed = append(placed, rc)
	}
}

func deref32(p *uint32) uint32 {
	if p == nil {
		return 0
	}
	return *p
}

// Stand-ins for Grafana's interval variables: distinctive durations, so the
// parsed range of every range selector tells which variable it came from.
var (
	rateIntervalSentinel = 7919 * time.Second
	rangeSentinel        = 7907 * time.Second
)

// queryCheck checks one panel query; e is nil when the query does not parse
// (target-promql-rule reports that, the others skip it).
type queryCheck func(r reporter, q query, e parser.Expr, err error, clusters []string)

// queryRules are the lintRules that look at one query at a time.
var queryRules = []queryCheck{
	lintTargetPromQL, lintTargetRateInterval, lintTargetJob, lintTargetInstance,
	lintTargetCounterAgg, lintTargetMatchers,
}

func init() {
	lintRules = append(lintRules, lintRule{"lockwatch-target-matchers", forEachQuery(lintTargetMatchers)})
}

// forEachQuery runs check on every panel query of a dashboard.
func forEachQuery(check queryCheck) func(reporter, lintInput) {
	return func(r reporter, in lintInput) {
		for _, q := range panelQueries(in.d) {
			e, err := parseWithSentinels(q)
			check(r, q, e, err, in.clusters)
		}
	}
}

// lintQuery runs every query rule on q, as TestLintCatchesViolations needs.
func lintQuery(r reporter, q query, clusters []string) {
	e, err := parseWithSentinels(q)
	for _, check := range queryRules {
		check(r, q, e, err, clusters)
	}
}

// parseWithSentinels parses a query with Grafana's interval variables
// replaced by the sentinels. Label variables stay literal: "$job" is a valid
// regex, so the parser accepts them and the matchers can be inspected as
// written.
func parseWithSentinels(q query) (parser.Expr, error) {
	expr := strings.NewReplacer(
		"$__rate_interval", fmt.Sprintf("%ds", int(rateIntervalSentinel.Seconds())),
		"$__range", fmt.Sprintf("%ds", int(rangeSentinel.Seconds())),
	).Replace(q.expr)
	return promql.ParseExpr(expr)
}

// lintTargetPromQL: the query parses, and has no subquery (a recording rule
// or a $__rate_interval range does the job at a fraction of the cost).
func lintTargetPromQL(r reporter, q query, e parser.Expr, err error, _ []string) {
	if err != nil {
		r.Errorf("%s: does not parse: %v", q.where, err)
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if sq, ok := n.(*parser.SubqueryExpr); ok {
			r.Errorf("%s: subquery %s; use $__rate_interval ranges or a recording rule", q.where, sq)
		}
		return nil
	})
}

// lintTargetRateInterval: every range is $__rate_interval, or $__range in an
// instant query (stricter than the linter, which checks rate and irate only).
func lintTargetRateInterval(r reporter, q query, e parser.Expr, _ error, _ []string) {
	if e == nil {
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		ms, ok := n.(*parser.MatrixSelector)
		if !ok {
			return nil
		}
		if ms.Range != rateIntervalSentinel && (ms.Range != rangeSentinel || !q.instant) {
			r.Errorf("%s: range [%s] is not $__rate_interval ($__range only in instant queries)", q.where, ms.Range)
		}
		return nil
	})
}

// lintTargetCounterAgg: a counter (or a histogram's _bucket, _count, _sum) is
// read only as the range of rate, irate or increase, never as a raw value.
func lintTargetCounterAgg(r reporter, q query, e parser.Expr, _ error, _ []string) {
	if e == nil {
		return
	}
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok || !isCounter(vs.Name) {
			return nil
		}
		ok = len(path) >= 2
		if ok {
			_, inRange := path[len(path)-1].(*parser.MatrixSelector)
			call, isCall := path[len(path)-2].(*parser.Call)
			ok = inRange && isCall && slices.Contains([]string{"rate", "irate", "increase"}, call.Func.Name)
		}
		if !ok {
			r.Errorf("%s: counter %s is not read through rate(), irate() or increase()", q.where, vs.Name)
		}
		return nil
	})
}

func isCounter(name string) bool {
	for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// selectors calls fn for every vector selector of e.
func eachSelector(e parser.Expr, fn func(vs *parser.VectorSelector)) {
	if e == nil {
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			fn(vs)
		}
		return nil
	})
}

// hasMatcher reports whether vs has label=~"value".
func hasMatcher(vs *parser.VectorSelector, label, value string) bool {
	return slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
		return m.Name == label && m.Type == labels.MatchRegexp && m.Value == value
	})
}

// lintTargetJob: every selector filters on its job variable, $job for the
// applications' series and $exporter_job for the exporter's. ALERTS is the
// exception: alerts of every job are listed.
func lintTargetJob(r reporter, q query, e parser.Expr, _ error, _ []string) {
	eachSelector(e, func(vs *parser.VectorSelector) {
		want := ""
		switch seriesKind(vs.Name) {
		case kindLibrary, kindRule:
			want = "$" + varJob
		case kindExporter:
			want = "$" + varExporterJob
		case kindAlerts:
			return
		}
		if !hasMatcher(vs, "job", want) {
			r.Errorf("%s: %s lacks job=~%q", q.where, vs, want)
		}
	})
}

// lintTargetInstance: the library's per-process series filter on $instance.
// Recording rules have no instance label (they are summed over instances)
// and the exporter's instance is the exporter, not an application process.
func lintTargetInstance(r reporter, q query, e parser.Expr, _ error, _ []string) {
	eachSelector(e, func(vs *parser.VectorSelector) {
		if seriesKind(vs.Name) == kindLibrary && !hasMatcher(vs, "instance", "$"+varInstance) {
			r.Errorf("%s: %s lacks instance=~%q", q.where, vs, "$"+varInstance)
		}
	})
}

// lintTargetMatchers: variables are matched with =~ (so All and multi-select
// work), every lockwatch series filters on the namespace and on each cluster
// variable, recording-rule series on nothing they do not carry, and no
// selector reads a series the pack does not know.
func lintTargetMatchers(r reporter, q query, e parser.Expr, _ error, clusters []string) {
	eachSelector(e, func(vs *parser.VectorSelector) {
		for _, m := range vs.LabelMatchers {
			if strings.Contains(m.Value, "$") && m.Type != labels.MatchRegexp {
				r.Errorf("%s: %s uses a variable without =~, so All and multi-select break", q.where, m)
			}
		}
		kind := seriesKind(vs.Name)
		namespace := "$" + varNamespace
		switch kind {
		case kindUnknown:
			r.Errorf("%s: %s is not a lockwatch series", q.where, vs)
			return
		case kindAlerts:
			namespace += "|"
		case kindExporter:
			if slices.Contains([]string{metricExporterUp, metricIdleAvailable}, vs.Name) {
				namespace = "" // exporter-wide series carry no namespace
			}
		}
		if namespace != "" && !hasMatcher(vs, "lock_namespace", namespace) {
			r.Errorf("%s: %s lacks lock_namespace=~%q", q.where, vs, namespace)
		}
		for _, l := range clusters {
			if !hasMatcher(vs, l, "$"+l) {
				r.Errorf("%s: %s lacks %s=~%q", q.where, vs, l, "$"+l)
			}
		}
		if kind == kindRule {
			// The rules aggregate by (cluster labels, job, lock_namespace):
			// any other matcher would select nothing.
			for _, m := range vs.LabelMatchers {
				if m.Name != "job" && m.Name != "lock_namespace" && m.Name != labels.MetricName && !slices.Contains(clusters, m.Name) {
					r.Errorf("%s: recording rule %s has no %s label to filter on", q.where, vs.Name, m.Name)
				}
			}
		}
	})
}

// reporter is the part of *testing.T the lint checks report through.
type reporter interface {
	Errorf(format string, args ...any)
}

// recorder collects reports instead of failing a test.
type recorder []string

func (r *recorder) Errorf(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

type kind int

const (
	kindUnknown kind = iota
	kindLibrary
	kindExporter
	kindRule
	kindAlerts
)

// seriesKind classifies a series by the matchers it needs.
func seriesKind(name string) kind {
	switch {
	case name == metricAlerts:
		return kindAlerts
	case strings.Contains(name, ":"):
		return kindRule
	case strings.HasPrefix(name, "lock_exporter_"), strings.HasPrefix(name, "lock_key"), strings.HasPrefix(name, "lock_expected_"):
		return kindExporter
	case strings.HasPrefix(name, "lock_"):
		return kindLibrary
	}
	return kindUnknown
}

// TestLintCatchesViolations feeds the query checks bad queries, so a check
// that silently stopped working would fail here.
func TestLintCatchesViolations(t *testing.T) {
	good := `sum by (lock_namespace) (rate(lock_renewals_total{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}[$__rate_interval]))`
	clustered := `sum by (lock_namespace) (rate(lock_renewals_total{cluster=~"$cluster", job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}[$__rate_interval]))`
	cluster := []string{"cluster"}
	tests := []struct {
		name, expr string
		instant    bool
		clusters   []string
		wantErrors bool
	}{
		{"good library query", good, false, nil, false},
		{"fixed window", strings.Replace(good, "$__rate_interval", "5m", 1), false, nil, true},
		{"range window in a range query", strings.Replace(good, "$__rate_interval", "$__range", 1), false, nil, true},
		{"range window in an instant query", strings.Replace(good, "$__rate_interval", "$__range", 1), true, nil, false},
		{"exact-match variable", strings.Replace(good, `job=~"$job"`, `job="$job"`, 1), false, nil, true},
		{"missing job", strings.Replace(good, `job=~"$job", `, "", 1), false, nil, true},
		{"missing instance", strings.Replace(good, `instance=~"$instance", `, "", 1), false, nil, true},
		{"missing namespace", strings.Replace(good, `, lock_namespace=~"$lock_namespace"`, "", 1), false, nil, true},
		{"raw counter", `sum(lock_renewals_total{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"})`, false, nil, true},
		{"counter in a non-rate function", strings.Replace(good, "rate(", "sum_over_time(", 1), false, nil, true},
		{"subquery", `max_over_time(lock_held{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}[$__rate_interval:])`, false, nil, true},
		{"does not parse", `sum(lock_held{job=~"$job"`, false, nil, true},
		{"good rule query", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", lock_namespace=~"$lock_namespace"}`, false, nil, false},
		{"rule with instance", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}`, false, nil, true},
		{"rule with a dropped label", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", lock_namespace=~"$lock_namespace", cluster="eu1"}`, false, nil, true},
		{"rule with a configured cluster", `job_lock_namespace:lock_renewals:rate5m{cluster=~"$cluster", job=~"$job", lock_namespace=~"$lock_namespace"}`, false, cluster, false},
		{"good clustered library query", clustered, false, cluster, false},
		{"configured cluster not filtered", good, false, cluster, true},
		{"exporter on library job", `lock_keys{job=~"$job", lock_namespace=~"$lock_namespace"}`, false, nil, true},
		{"good exporter query", `min(lock_exporter_up{job=~"$exporter_job"})`, false, nil, false},
		{"good alerts query", `count(ALERTS{alertname=~"Lock.*", lock_namespace=~"$lock_namespace|"})`, false, nil, false},
		{"foreign metric", `up{job=~"$job"}`, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			lintQuery(&rec, query{where: tt.name, expr: tt.expr, instant: tt.instant}, tt.clusters)
			if got := len(rec) > 0; got != tt.wantErrors {
				t.Errorf("lint reported errors = %v, want %v: %q", got, tt.wantErrors, rec)
			}
		})
	}
}

// TestLintRulesCatchViolations breaks the committed overview in one way per
// dashboard-level rule and expects exactly that rule to object, so no rule
// can silently stop checking.
func TestLintRulesCatchViolations(t *testing.T) {
	raw := committed(t)[OverviewUID+".json"]
	varIndex := func(d *dashboard.Dashboard, name string) int {
		for i, v := range d.Templating.List {
			if v.Name == name {
				return i
			}
		}
		t.Fatalf("no variable %s", name)
		return -1
	}
	firstPanel := func(d *dashboard.Dashboard) *dashboard.Panel {
		for _, p := range d.Panels {
			if p.Panel != nil {
				return p.Panel
			}
		}
		t.Fatal("no panel")
		return nil
	}
	tests := []struct {
		rule  string
		spoil func(d *dashboard.Dashboard)
	}{
		{"template-datasource-rule", func(d *dashboard.Dashboard) {
			d.Templating.List[varIndex(d, varDatasource)].Label = cog.ToPtr("Prometheus")
		}},
		{"template-job-rule", func(d *dashboard.Dashboard) {
			d.Templating.List[varIndex(d, varJob)].AllValue = cog.ToPtr(".*")
		}},
		{"template-instance-rule", func(d *dashboard.Dashboard) {
			d.Templating.List[varIndex(d, varInstance)].Multi = cog.ToPtr(false)
		}},
		{"template-label-promql-rule", func(d *dashboard.Dashboard) {
			d.Templating.List[varIndex(d, varJob)].Query.String = cog.ToPtr("label_values(lock_held{, job)")
		}},
		{"template-on-time-change-reload-rule", func(d *dashboard.Dashboard) {
			d.Templating.List[varIndex(d, varJob)].Refresh = cog.ToPtr(dashboard.VariableRefreshOnDashboardLoad)
		}},
		{"panel-title-description-rule", func(d *dashboard.Dashboard) { firstPanel(d).Description = nil }},
		{"panel-units-rule", func(d *dashboard.Dashboard) { firstPanel(d).FieldConfig.Defaults.Unit = cog.ToPtr("lockz") }},
		{"panel-no-targets-rule", func(d *dashboard.Dashboard) { firstPanel(d).Targets = nil }},
		{"uneditable-dashboard-rule", func(d *dashboard.Dashboard) { d.Editable = cog.ToPtr(true) }},
		{"lockwatch-identity", func(d *dashboard.Dashboard) { d.Tags = []string{"other"} }},
		{"lockwatch-variables", func(d *dashboard.Dashboard) {
			d.Templating.List = append(d.Templating.List, d.Templating.List[varIndex(d, varJob)])
			d.Templating.List[len(d.Templating.List)-1].Name = "team"
		}},
		{"lockwatch-layout", func(d *dashboard.Dashboard) { firstPanel(d).GridPos.X = 20 }},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			d := decode(t, "overview", raw)
			tt.spoil(&d)
			broken, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			in := lintInput{file: OverviewUID + ".json", raw: broken, d: d}
			for _, rule := range lintRules {
				var rec recorder
				rule.check(&rec, in)
				switch {
				case rule.name == tt.rule && len(rec) == 0:
					t.Errorf("%s did not object", rule.name)
				case rule.name != tt.rule && len(rec) > 0 && !strings.HasPrefix(rule.name, "lockwatch-"):
					t.Errorf("%s objected too: %q", rule.name, rec)
				}
			}
		})
	}
	t.Run("panel-datasource-rule", func(t *testing.T) {
		broken := strings.Replace(string(raw), `"uid": "${datasource}"`, `"uid": "prod-prometheus"`, 1)
		var rec recorder
		lintPanelDatasource(&rec, lintInput{raw: []byte(broken)})
		if len(rec) == 0 {
			t.Error("panel-datasource-rule did not object to a fixed datasource uid")
		}
	})
}

// TestLintRulesNameTheLinter keeps the rule list complete: every rule of
// dashboard-linter's default set, and uneditable-dashboard-rule, is checked.
func TestLintRulesNameTheLinter(t *testing.T) {
	want := []string{
		"template-datasource-rule", "template-job-rule", "template-instance-rule",
		"template-label-promql-rule", "template-on-time-change-reload-rule",
		"panel-datasource-rule", "panel-title-description-rule", "panel-units-rule",
		"panel-no-targets-rule", "target-promql-rule", "target-rate-interval-rule",
		"target-job-rule", "target-instance-rule", "target-counter-agg-rule",
		"uneditable-dashboard-rule",
	}
	var have []string
	for _, r := range lintRules {
		have = append(have, r.name)
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Errorf("no check for %s", w)
		}
	}
}
