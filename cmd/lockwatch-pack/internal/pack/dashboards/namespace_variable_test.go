package dashboards

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	promqlengine "github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestNamespaceVariableListsExporterOnlyNamespaces runs the overview's namespace variable, as
// Grafana would, over series where one namespace only the exporter reports (a Redisson lock, a
// cron script's lock): with selectors.library set, it must still be offered, and a namespace of
// a process the library selector leaves out must not.
func TestNamespaceVariableListsExporterOnlyNamespaces(t *testing.T) {
	store := promqltest.LoadedStorage(t, `
load 1m
	lock_held{job="workers", lock_namespace="jobs"} 1x10
	lock_held{job="other-app", lock_namespace="elsewhere"} 1x10
	lock_keys{job="lock-exporter", lock_namespace="jobs"} 1x10
	lock_keys{job="lock-exporter", lock_namespace="redisson"} 1x10
`)
	engine := promqltest.NewTestEngine(t, false, 5*time.Minute, 10000)
	at := time.Unix(0, 0).Add(9 * time.Minute)
	for _, tt := range []struct {
		name     string
		library  string
		exporter string
		want     []string
	}{
		{"no selectors", "", "", []string{"elsewhere", "jobs", "redisson"}},
		{"library selector", `job="workers"`, "", []string{"jobs", "redisson"}},
		{"both selectors", `job="workers"`, `job="lock-exporter"`, []string{"jobs", "redisson"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := packconfig.Default()
			cfg.Selectors.Library, cfg.Selectors.Exporter = tt.library, tt.exporter
			files, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				if !strings.HasSuffix(f.Path, OverviewUID+".json") {
					continue
				}
				v, ok := variable(decode(t, f.Path, f.Data), varNamespace)
				if !ok {
					t.Fatal("no namespace variable")
				}
				got = runVariable(t, engine, store, deref(v.Query.String), deref(v.Regex), at)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("namespace variable offers %v, want %v", got, tt.want)
			}
		})
	}
}

// runVariable evaluates a label_values or query_result variable query at at, with a 10-minute
// dashboard range, and returns the values it offers, sorted.
func runVariable(t *testing.T, engine *promqlengine.Engine, store storage.Storage, query, re string, at time.Time) []string {
	t.Helper()
	var values []string
	if m := labelValues.FindStringSubmatch(query); m != nil {
		matchers, err := promql.ParseMetricSelector(m[1])
		if err != nil {
			t.Fatal(err)
		}
		q, err := store.Querier(at.Add(-10*time.Minute).UnixMilli(), at.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		set := q.Select(context.Background(), false, nil, matchers...)
		for set.Next() {
			values = append(values, set.At().Labels().Get(m[2]))
		}
		if err := set.Err(); err != nil {
			t.Fatal(err)
		}
	} else if m := queryResult.FindStringSubmatch(query); m != nil {
		expr := strings.ReplaceAll(m[1], "$__range", "600s")
		q, err := engine.NewInstantQuery(context.Background(), store, nil, expr, at)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		vec, err := q.Exec(context.Background()).Vector()
		if err != nil {
			t.Fatal(err)
		}
		r := regexp.MustCompile(strings.Trim(re, "/"))
		for _, s := range vec {
			// Grafana's query_result line: name{labels} value timestamp.
			line := s.Metric.Get(labels.MetricName) + s.Metric.DropMetricName().String() + " 1 " + at.String()
			if sm := r.FindStringSubmatch(line); sm != nil {
				values = append(values, sm[1])
			}
		}
	} else {
		t.Fatalf("variable query %q not modelled", query)
	}
	slices.Sort(values)
	return slices.Compact(values)
}
