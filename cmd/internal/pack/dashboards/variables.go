package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// allValueLabel makes "All" render as a regex instead of a list of the
// values Grafana happened to load, so series that appear after the variable
// refreshed (a new pod, a new namespace) are still shown. It is .+ (any
// non-empty value), as grafana/dashboard-linter's template rules require:
// every series the panels read carries job, instance and lock_namespace.
const allValueLabel = ".+"

// allValueCluster is All for a cluster variable: .* also matches series
// without the label, as when each Prometheus serves one cluster and only a
// global view adds it.
const allValueCluster = ".*"

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
	// Every variable below the cluster ones lists only what the selected
	// clusters report.
	library := metricHeld + matchers(sel.cluster(), sel.library)
	namespaces := library
	if withStore {
		namespaces = namespaceSource(sel)
	}
	vars := []cog.Builder[dashboard.VariableModel]{ds}
	vars = append(vars, clusterVariables(sel, withStore)...)
	vars = append(vars,
		multiVariable(varJob, "Job",
			"Scrape job of the processes that use the lockwatch library.",
			"label_values("+library+", job)", allValueLabel),
		multiVariable(varInstance, "Instance",
			"Process (scrape target) within the selected jobs. Panels built on recording rules are already summed over instances and ignore this filter.",
			"label_values("+metricHeld+matchers(sel.withClusters(`job=~"$job"`), sel.library)+", instance)", allValueLabel),
		multiVariable(varNamespace, "Lock namespace",
			"Lock namespace: a group of locks that share one policy (TTL, renew interval).",
			"label_values("+namespaces+", lock_namespace)", allValueLabel),
	)
	if withStore {
		vars = append(vars, multiVariable(varExporterJob, "Exporter job",
			"Scrape job of the lock-exporter that scans live lock keys in Redis.",
			"label_values("+metricExporterUp+matchers(sel.cluster(), sel.exporter)+", job)", allValueLabel))
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
	return matchers(sel.withClusters(`__name__=~"`+metricHeld+`|`+metricKeys+`"`), extra)
}

// clusterVariables returns one variable per configured cluster label, each
// listing the values reported within the clusters selected before it.
func clusterVariables(sel selectors, withStore bool) []cog.Builder[dashboard.VariableModel] {
	source := `__name__=~"` + metricHeld + `"`
	if withStore {
		source = `__name__=~"` + metricHeld + `|` + metricKeys + `"`
	}
	var vars []cog.Builder[dashboard.VariableModel]
	for i, l := range sel.clusters {
		before := selectors{clusters: sel.clusters[:i]}
		query := "label_values(" + matchers(before.withClusters(source), "") + ", " + l + ")"
		vars = append(vars, multiVariable(l, clusterTitle(l),
			"Deployment label "+l+" (pack setting cluster_labels): which clusters' locks the panels show.",
			query, allValueCluster))
	}
	return vars
}

// clusterTitle turns a label name such as k8s_cluster into a variable label
// such as "K8s cluster".
func clusterTitle(label string) string {
	words := strings.ReplaceAll(label, "_", " ")
	return strings.ToUpper(words[:1]) + words[1:]
}

func multiVariable(name, label, description, query, all string) *dashboard.QueryVariableBuilder {
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
		AllValue(all).
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")},
		})
}
