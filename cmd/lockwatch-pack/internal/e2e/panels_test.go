package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// A panel that returns no series for a live workload is a panel a user stares at in vain: its
// query names a series nobody writes, a label nobody sets, or a selector that excludes the data.
// The checks in the dashboards package parse every query; this one runs them.

// panelPack is one generated pack whose dashboards are checked against the Prometheus that
// evaluates its rules.
type panelPack struct {
	name       string
	prom       panelSource
	dashboards []pack.File
}

// selection is how the variables are set: every query variable on All, or on one value.
type selection struct {
	name string
	all  bool
	// prefer is the value picked for a variable when it is offered; otherwise the first
	// (alphabetical) one is, as Grafana selects for a fresh single-value variable.
	prefer map[string]string
}

var selections = []selection{
	{name: "All", all: true},
	// scheduler is the demo namespace that renews, fences and abandons: the one a user would
	// pick to look at the incident.
	{name: "one value", prefer: map[string]string{"lock_namespace": "scheduler"}},
}

// emptyByDesign lists, per selection, the panels ("selection: dashboard uid › panel title") or
// single targets (… › refId) that return no series for the e2e workload, each with the reason.
// A panel not listed here must return data under that selection.
var emptyByDesign = map[string]string{
	"one value: lockwatch-overview › Keys without TTL": "the scheduler's leases all expire; the demo's lock without TTL is the reconciler's legacy cron lock",
}

// instantRetries is how many more scrapes an empty table query is given. A table shows one
// instant: when the demo's last scrape found no lock of a namespace (an abandoned scheduler job
// between its release and the next acquire), the namespace's top-K series went stale, and
// Grafana shows them again at its next refresh.
const instantRetries = 5

// requeryInstant runs an instant query again at fresh instants, a few scrapes apart, and returns
// the first answer with series (nil when none has).
func requeryInstant(prom panelSource, expr string) []promSeries {
	for range instantRetries {
		time.Sleep(2 * interval)
		now := time.Now()
		series, err := prom.query(expr, true, newTimeRange(now.Add(-15*time.Minute), now, interval, 1000))
		if err == nil && len(series) > 0 {
			return series
		}
	}
	return nil
}

// checkPanels runs every panel query of p's dashboards, under each selection, over the last
// 15 minutes as Grafana would draw them, and fails for every target that returns no series and is
// not empty by design.
func checkPanels(t *testing.T, p panelPack) {
	t.Helper()
	to := time.Now()
	tr := newTimeRange(to.Add(-15*time.Minute), to, interval, 1000)
	var ran, empty int
	for _, f := range p.dashboards {
		d, err := decodeDashboard(f.Data)
		if err != nil {
			t.Fatalf("%s %s: %v", p.name, f.Path, err)
		}
		for _, sel := range selections {
			values, options, err := resolveVariables(p.prom, d, sel, tr)
			if err != nil {
				t.Errorf("%s, %s, variables on %s: %v", p.name, d.UID, sel.name, err)
				continue
			}
			checkNamespaceOptions(t, p, d, options, tr)
			for _, target := range d.targets() {
				expr, err := interpolate(target.expr, values)
				if err != nil {
					t.Errorf("%s, %s: %v", p.name, target.where, err)
					continue
				}
				series, err := p.prom.query(expr, target.instant, tr)
				if err != nil {
					t.Errorf("%s, %s, variables on %s: %v\n%s", p.name, target.where, sel.name, err, expr)
					continue
				}
				ran++
				if len(series) == 0 && target.instant {
					series = requeryInstant(p.prom, expr)
				}
				if len(series) > 0 {
					continue
				}
				empty++
				if reason, ok := exemption(sel, target); ok {
					t.Logf("%s, %s, variables on %s: empty by design (%s)", p.name, target.where, sel.name, reason)
					continue
				}
				t.Errorf("%s, %s, variables on %s: no series\n%s", p.name, target.where, sel.name, expr)
			}
		}
	}
	t.Logf("%s: %d panel queries run, %d empty", p.name, ran, empty)
}

func exemption(sel selection, target panelTarget) (string, bool) {
	if r, ok := emptyByDesign[sel.name+": "+target.where]; ok {
		return r, true
	}
	r, ok := emptyByDesign[sel.name+": "+target.panel]
	return r, ok
}

// checkNamespaceOptions fails when a dashboard that shows what the exporter sees (it has the
// exporter_job variable) leaves a namespace the exporter reports out of its namespace drop-down.
func checkNamespaceOptions(t *testing.T, p panelPack, d gDashboard, options map[string][]string, tr timeRange) {
	t.Helper()
	if _, ok := options["exporter_job"]; !ok {
		return
	}
	seen, err := p.prom.labelValues("lock_namespace", "lock_keys", tr)
	if err != nil {
		t.Errorf("%s: %v", p.name, err)
		return
	}
	for _, ns := range seen {
		if !slices.Contains(options["lock_namespace"], ns) {
			t.Errorf("%s, %s: namespace %q has lock_keys but is missing from the lock_namespace variable %v", p.name, d.UID, ns, options["lock_namespace"])
		}
	}
}

// resolveVariables fills in d's variables top to bottom, as Grafana refreshes them: each query
// variable's query is run with the variables above it already set. It returns the value each
// variable is replaced with (the built-ins included) and the options each query variable offered.
func resolveVariables(prom panelSource, d gDashboard, sel selection, tr timeRange) (map[string]string, map[string][]string, error) {
	values := make(map[string]string)
	for k, v := range tr.builtins {
		values[k] = v
	}
	options := make(map[string][]string)
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			// Only panels' datasource references use it, never a query.
			values[v.Name] = "prometheus"
			continue
		case "query":
		default:
			return nil, nil, fmt.Errorf("variable %s: type %q not modelled", v.Name, v.Type)
		}
		raw, ok := v.Query.(string)
		if !ok {
			return nil, nil, fmt.Errorf("variable %s: query %v is not a string", v.Name, v.Query)
		}
		q, err := interpolate(raw, values)
		if err != nil {
			return nil, nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		opts, err := variableOptions(prom, q, v.Regex, tr)
		if err != nil {
			return nil, nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		if len(opts) == 0 {
			return nil, nil, fmt.Errorf("variable %s offers nothing: %s", v.Name, q)
		}
		options[v.Name] = opts
		switch {
		case sel.all && v.IncludeAll && v.AllValue != "":
			values[v.Name] = v.AllValue
		case sel.all && v.IncludeAll:
			values[v.Name] = selected(opts)
		case slices.Contains(opts, sel.prefer[v.Name]):
			values[v.Name] = selected([]string{sel.prefer[v.Name]})
		default:
			values[v.Name] = selected(opts[:1])
		}
	}
	return values, options, nil
}

// variableOptions runs a query variable's interpolated query and returns the values it offers,
// sorted and without repeats.
func variableOptions(prom panelSource, q, re string, tr timeRange) ([]string, error) {
	vq, err := parseVariableQuery(q)
	if err != nil {
		return nil, err
	}
	var texts []string
	if vq.expr == "" {
		if texts, err = prom.labelValues(vq.label, vq.selector, tr); err != nil {
			return nil, err
		}
	} else {
		series, err := prom.query(vq.expr, true, tr)
		if err != nil {
			return nil, err
		}
		for _, s := range series {
			if len(s.Value) != 2 {
				return nil, fmt.Errorf("query_result sample %v", s.Value)
			}
			ts, _ := s.Value[0].(float64)
			val, _ := s.Value[1].(string)
			texts = append(texts, queryResultText(s.Metric, val, ts))
		}
	}
	texts, err = applyRegex(texts, re)
	if err != nil {
		return nil, err
	}
	slices.Sort(texts)
	texts = slices.Compact(texts)
	return slices.DeleteFunc(texts, func(s string) bool { return strings.TrimSpace(s) == "" }), nil
}

// legacyNamespace is watched by the exporter only; no library process reports it.
const legacyNamespace = "legacy-cron"

// clusterPackOverrides turn on everything a multi-cluster deployment sets: a cluster label and
// selectors for both sides.
const clusterPackOverrides = packOverrides + `
cluster_labels: [cluster]
selectors:
  library: 'job="lockwatch-apps"'
  exporter: 'job="lock-exporter"'
`

func generateDashboards(t *testing.T, overrides string) []pack.File {
	t.Helper()
	cfg, err := packconfig.Parse([]byte(overrides))
	if err != nil {
		t.Fatal(err)
	}
	files, err := dashboards.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// startClusterPrometheus starts a second Prometheus that scrapes the same exporter and
// application with a cluster target label and evaluates the rules of the multi-cluster pack, and
// returns that pack for checkPanels. It sends no alerts: the incident's alerts come from the first.
func startClusterPrometheus(t *testing.T, root, work, bin, exporterAddr, appAddr string) panelPack {
	t.Helper()
	cfg, err := packconfig.Parse([]byte(clusterPackOverrides))
	if err != nil {
		t.Fatal(err)
	}
	generated, err := rules.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "cluster")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var ruleFiles []string
	for _, r := range generated {
		ruleFiles = append(ruleFiles, writeFile(t, dir, filepath.Base(r.Path), r.Data))
	}
	var promCfg map[string]any
	if err := yaml.Unmarshal(prometheusConfig(t, root, ruleFiles, exporterAddr, appAddr, "127.0.0.1:1"), &promCfg); err != nil {
		t.Fatal(err)
	}
	delete(promCfg, "alerting")
	for _, j := range promCfg["scrape_configs"].([]any) {
		for _, sc := range j.(map[string]any)["static_configs"].([]any) {
			sc.(map[string]any)["labels"] = map[string]string{"cluster": "e2e"}
		}
	}
	addr := testkit.UnusedAddr(t)
	file := writeFile(t, dir, "prometheus.yml", marshal(t, promCfg))
	p := startProcess(t, "prometheus-cluster", bin, "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"), "--web.listen-address="+addr)
	p.waitReady(t, "http://"+addr+"/-/ready")
	files, err := dashboards.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return panelPack{name: "multi-cluster pack", prom: panelSource{"http://" + addr}, dashboards: files}
}
