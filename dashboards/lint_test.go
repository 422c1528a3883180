package dashboards

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// The lint checks follow grafana/dashboard-linter's rules (template-datasource,
// template-job, template-instance, template-label-promql, panel-datasource,
// panel-title-description, panel-units, panel-no-targets, target-promql,
// target-rate-interval, target-job, target-instance, target-counter-agg),
// adapted where lockwatch deliberately differs: recording-rule series carry no
// instance label, and exporter series are filtered by their own job variable.

// multiVariables are the variables panels filter on; each must be a
// multi-select with a match-anything All.
var multiVariables = []string{varJob, varInstance, varNamespace, varExporterJob}

func TestLintDashboards(t *testing.T) {
	for variant, out := range outputs(t) {
		files := out.files
		for _, name := range sortedKeys(files) {
			t.Run(variant+"/"+name, func(t *testing.T) {
				d := decode(t, name, files[name])
				lintDashboard(t, name, d)
				lintVariables(t, d)
				lintPanels(t, d)
				lintDatasourceRefs(t, files[name])
				for _, q := range panelQueries(d) {
					lintQuery(t, q)
				}
			})
		}
	}
}

func lintDashboard(t *testing.T, file string, d dashboard.Dashboard) {
	if d.Uid == nil || *d.Uid+".json" != file {
		t.Errorf("uid %v does not match file name %s", deref(d.Uid), file)
	}
	if d.Title == nil || *d.Title == "" || d.Description == nil || *d.Description == "" {
		t.Error("dashboard title or description missing")
	}
	if !slices.Contains(d.Tags, commonTag) {
		t.Errorf("tags %v lack %q, which the links menu relies on", d.Tags, commonTag)
	}
	if d.Refresh == nil || *d.Refresh == "" {
		t.Error("no refresh interval")
	}
	if d.Time == nil || !strings.HasPrefix(d.Time.From, "now-") || d.Time.To != "now" {
		t.Errorf("time range %+v is not relative to now", d.Time)
	}
}

func lintVariables(t *testing.T, d dashboard.Dashboard) {
	vars := map[string]dashboard.VariableModel{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	ds, ok := vars[varDatasource]
	switch {
	case !ok:
		t.Fatal("no datasource variable")
	case ds.Type != dashboard.VariableTypeDatasource || ds.Query == nil || deref(ds.Query.String) != "prometheus":
		t.Errorf("datasource variable is not a Prometheus datasource picker: %+v", ds)
	case deref(ds.Label) != "Data source":
		t.Errorf("datasource variable label %q, want %q", deref(ds.Label), "Data source")
	}
	for _, name := range []string{varJob, varInstance, varNamespace} {
		if _, ok := vars[name]; !ok {
			t.Errorf("no %s variable", name)
		}
	}
	raw, err := json.Marshal(d.Panels)
	if err != nil {
		t.Fatal(err)
	}
	used := string(raw)
	for _, v := range d.Templating.List {
		if v.Name == varDatasource {
			continue
		}
		if v.Type != dashboard.VariableTypeQuery {
			t.Errorf("variable %s has type %s, want query", v.Name, v.Type)
			continue
		}
		if v.Datasource == nil || deref(v.Datasource.Uid) != "${datasource}" {
			t.Errorf("variable %s does not query the datasource variable", v.Name)
		}
		if v.Refresh == nil || *v.Refresh != dashboard.VariableRefreshOnTimeRangeChanged {
			t.Errorf("variable %s does not reload on time range change", v.Name)
		}
		if slices.Contains(multiVariables, v.Name) &&
			(v.Multi == nil || !*v.Multi || v.IncludeAll == nil || !*v.IncludeAll || deref(v.AllValue) != allValue) {
			t.Errorf("variable %s is not multi-select with All = %q", v.Name, allValue)
		}
		if !strings.Contains(used, "$"+v.Name) {
			t.Errorf("variable %s is not used by any panel", v.Name)
		}
	}
}

func lintPanels(t *testing.T, d dashboard.Dashboard) {
	ids := map[uint32]string{}
	type rect struct{ x0, y0, x1, y1 uint32 }
	var placed []rect
	for _, p := range d.Panels {
		var id uint32
		var title string
		var pos *dashboard.GridPos
		if p.RowPanel != nil {
			id, title, pos = p.RowPanel.Id, deref(p.RowPanel.Title), p.RowPanel.GridPos
		} else {
			id, title, pos = deref32(p.Panel.Id), deref(p.Panel.Title), p.Panel.GridPos
		}
		if other, dup := ids[id]; dup || id == 0 {
			t.Errorf("panel %q has id %d, also used by %q", title, id, other)
		}
		ids[id] = title
		if pos == nil || pos.X+pos.W > 24 || pos.W == 0 || pos.H == 0 {
			t.Errorf("panel %q has grid position %+v outside the 24-column grid", title, pos)
			continue
		}
		r := rect{pos.X, pos.Y, pos.X + pos.W, pos.Y + pos.H}
		for _, o := range placed {
			if r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1 {
				t.Errorf("panel %q overlaps another panel", title)
			}
		}
		placed = append(placed, r)
	}
	for _, p := range panels(d) {
		title := deref(p.Title)
		if title == "" || p.Description == nil || len(*p.Description) < 40 {
			t.Errorf("panel %q lacks a title or a description a newcomer can use", title)
		}
		if p.Datasource == nil || deref(p.Datasource.Uid) != "${datasource}" || deref(p.Datasource.Type) != "prometheus" {
			t.Errorf("panel %q does not use the datasource variable", title)
		}
		if p.FieldConfig == nil || p.FieldConfig.Defaults.Unit == nil || *p.FieldConfig.Defaults.Unit == "" {
			t.Errorf("panel %q has no unit", title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", title)
		}
		raw, err := json.Marshal(p.Targets)
		if err != nil {
			t.Fatal(err)
		}
		var targets []struct {
			Expr       string         `json:"expr"`
			Datasource map[string]any `json:"datasource"`
		}
		if err := json.Unmarshal(raw, &targets); err != nil {
			t.Fatal(err)
		}
		for i, tg := range targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q target %d has no expression", title, i)
			}
			if tg.Datasource["uid"] != "${datasource}" {
				t.Errorf("panel %q target %d does not use the datasource variable", title, i)
			}
		}
	}
}

func deref32(p *uint32) uint32 {
	if p == nil {
		return 0
	}
	return *p
}

// lintDatasourceRefs walks the raw JSON: every datasource reference anywhere
// must be the variable, so no Grafana instance's datasource is baked in.
func lintDatasourceRefs(t *testing.T, raw []byte) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "datasource" {
					ref, ok := child.(map[string]any)
					if !ok || ref["uid"] != "${datasource}" || ref["type"] != "prometheus" {
						t.Errorf("%s.datasource = %v, want the datasource variable", path, child)
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

// Stand-ins for Grafana's interval variables: distinctive durations, so the
// parsed range of every range selector tells which variable it came from.
var (
	rateIntervalSentinel = 7919 * time.Second
	rangeSentinel        = 7907 * time.Second
)

// lintQuery checks one panel query: range windows come from $__rate_interval
// (or $__range in an instant query), counters and histogram buckets are
// only read through a range function, and every selector filters on the
// dashboard's variables with regex matchers.
func lintQuery(t reporter, q query) {
	expr := strings.NewReplacer(
		"$__rate_interval", fmt.Sprintf("%ds", int(rateIntervalSentinel.Seconds())),
		"$__range", fmt.Sprintf("%ds", int(rangeSentinel.Seconds())),
	).Replace(q.expr)
	// Label variables stay literal: "$job" is a valid regex, so the parser
	// accepts them and the matchers can be inspected as written.
	e, err := promql.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: does not parse: %v", q.where, err)
		return
	}
	inRange := map[*parser.VectorSelector]bool{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.MatrixSelector:
			inRange[n.VectorSelector.(*parser.VectorSelector)] = true
			switch {
			case n.Range == rateIntervalSentinel:
			case n.Range == rangeSentinel && q.instant:
			default:
				t.Errorf("%s: range [%s] is not $__rate_interval ($__range only in instant queries)", q.where, n.Range)
			}
		case *parser.SubqueryExpr:
			t.Errorf("%s: subquery %s; use $__rate_interval ranges or a recording rule", q.where, n)
		}
		return nil
	})
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
			if strings.HasSuffix(vs.Name, suffix) && !inRange[vs] {
				t.Errorf("%s: counter %s is read without rate() or increase()", q.where, vs.Name)
			}
		}
		lintMatchers(t, q.where, vs)
		return nil
	})
}

// lintMatchers requires the variable matchers each kind of series must carry.
func lintMatchers(t reporter, where string, vs *parser.VectorSelector) {
	// A label may have several matchers: the configured selectors add theirs
	// next to the variable's.
	got := map[string][]*labels.Matcher{}
	for _, m := range vs.LabelMatchers {
		if strings.Contains(m.Value, "$") && m.Type != labels.MatchRegexp {
			t.Errorf("%s: %s uses a variable without =~, so All and multi-select break", where, m)
		}
		got[m.Name] = append(got[m.Name], m)
	}
	want := func(label, value string) {
		if !slices.ContainsFunc(got[label], func(m *labels.Matcher) bool {
			return m.Type == labels.MatchRegexp && m.Value == value
		}) {
			t.Errorf("%s: %s lacks %s=~%q", where, vs, label, value)
		}
	}
	switch kind := seriesKind(vs.Name); kind {
	case kindAlerts:
		want("lock_namespace", "$lock_namespace|")
	case kindRule:
		want("job", "$job")
		want("lock_namespace", "$lock_namespace")
		// The rules aggregate by (job, lock_namespace): any other matcher
		// would select nothing.
		for label := range got {
			if label != "job" && label != "lock_namespace" && label != labels.MetricName {
				t.Errorf("%s: recording rule %s has no %s label to filter on", where, vs.Name, label)
			}
		}
	case kindLibrary:
		want("job", "$job")
		want("instance", "$instance")
		want("lock_namespace", "$lock_namespace")
	case kindExporter:
		want("job", "$exporter_job")
		if !slices.Contains([]string{metricExporterUp, metricIdleAvailable}, vs.Name) {
			want("lock_namespace", "$lock_namespace")
		}
	default:
		t.Errorf("%s: %s is not a lockwatch series", where, vs)
	}
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
	tests := []struct {
		name, expr string
		instant    bool
		wantErrors bool
	}{
		{"good library query", good, false, false},
		{"fixed window", strings.Replace(good, "$__rate_interval", "5m", 1), false, true},
		{"range window in a range query", strings.Replace(good, "$__rate_interval", "$__range", 1), false, true},
		{"range window in an instant query", strings.Replace(good, "$__rate_interval", "$__range", 1), true, false},
		{"exact-match variable", strings.Replace(good, `job=~"$job"`, `job="$job"`, 1), false, true},
		{"missing instance", strings.Replace(good, `instance=~"$instance", `, "", 1), false, true},
		{"missing namespace", strings.Replace(good, `, lock_namespace=~"$lock_namespace"`, "", 1), false, true},
		{"raw counter", `sum(lock_renewals_total{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"})`, false, true},
		{"subquery", `max_over_time(lock_held{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}[$__rate_interval:])`, false, true},
		{"good rule query", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", lock_namespace=~"$lock_namespace"}`, false, false},
		{"rule with instance", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", instance=~"$instance", lock_namespace=~"$lock_namespace"}`, false, true},
		{"rule with a dropped label", `job_lock_namespace:lock_renewals:rate5m{job=~"$job", lock_namespace=~"$lock_namespace", cluster="eu1"}`, false, true},
		{"exporter on library job", `lock_keys{job=~"$job", lock_namespace=~"$lock_namespace"}`, false, true},
		{"good exporter query", `min(lock_exporter_up{job=~"$exporter_job"})`, false, false},
		{"foreign metric", `up{job=~"$job"}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			lintQuery(&rec, query{where: tt.name, expr: tt.expr, instant: tt.instant})
			if got := len(rec) > 0; got != tt.wantErrors {
				t.Errorf("lint reported errors = %v, want %v: %q", got, tt.wantErrors, rec)
			}
		})
	}
}
