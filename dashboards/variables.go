package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// allValue makes "All" render as a match-anything regex instead of a list of
// the values Grafana happened to load, so series that appear after the
// variable refreshed (a new pod, a new namespace) are still shown.
const allValue = ".*"

// variables returns the template variables of a lockwatch dashboard, in the
// order they appear at the top of the page. withStore adds the exporter's
// variable for dashboards that show what the exporter sees in Redis.
func variables(s settings, withStore bool) []cog.Builder[dashboard.VariableModel] {
	ds := dashboard.NewDatasourceVariableBuilder(varDatasource).
		Label("Data source").
		Description("Prometheus server that scrapes the lockwatch library and the lock exporter.").
		Type("prometheus")
	if s.datasourceRegex != "" {
		ds.Regex(s.datasourceRegex)
	}
	if s.datasource != "" {
		ds.Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr(s.datasource)},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(s.datasource)},
		})
	}
	sel := s.selectors
	namespaces := metricHeld + matchers(nil, sel.library)
	if withStore {
		namespaces = namespaceSource(sel)
	}
	vars := []cog.Builder[dashboard.VariableModel]{
		ds,
		multiVariable(varJob, "Job",
			"Scrape job of the processes that use the lockwatch library.",
			"label_values("+metricHeld+matchers(nil, sel.library)+", job)"),
		multiVariable(varInstance, "Instance",
			"Process (scrape target) within the selected jobs. Panels built on recording rules are already summed over instances and ignore this filter.",
			"label_values("+metricHeld+matchers([]string{`job=~"$job"`}, sel.library)+", instance)"),
		multiVariable(varNamespace, "Lock namespace",
			"Lock namespace: a group of locks that share one policy (TTL, renew interval).",
			"label_values("+namespaces+", lock_namespace)"),
	}
	if withStore {
		vars = append(vars, multiVariable(varExporterJob, "Exporter job",
			"Scrape job of the lock-exporter that scans live lock keys in Redis.",
			"label_values("+metricExporterUp+matchers(nil, sel.exporter)+", job)"))
	}
	return vars
}

// namespaceSource selects series from both the library and the exporter, so a
// namespace appears even when only one side reports it (the exporter also
// watches locks that are not taken through the library). Grafana takes one
// selector here, so the library's configured matchers win when both are set.
func namespaceSource(sel selectors) string {
	extra := sel.library
	if extra == "" {
		extra = sel.exporter
	}
	return matchers([]string{`__name__=~"` + metricHeld + `|` + metricKeys + `"`}, extra)
}

func multiVariable(name, label, description, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Description(description).
		Datasource(datasourceRef()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(allValue).
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")},
		})
}
