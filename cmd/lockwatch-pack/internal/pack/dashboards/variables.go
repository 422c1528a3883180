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
	namespaces := namespaceVariable{query: "label_values(" + library + ", lock_namespace)"}
	if withStore {
		namespaces = namespaceSource(sel)
	}
	namespaceVar := multiVariable(varNamespace, "Lock namespace",
		"Lock namespace: a group of locks that share one policy (TTL, renew interval).",
		namespaces.query, allValueLabel)
	if namespaces.regex != "" {
		namespaceVar.Regex(namespaces.regex)
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
		namespaceVar,
	)
	if withStore {
		vars = append(vars, multiVariable(varExporterJob, "Exporter job",
			"Scrape job of the lock-exporter that scans live lock keys in Redis.",
			"label_values("+metricExporterUp+matchers(sel.cluster(), sel.exporter)+", job)", allValueLabel))
	}
	return vars
}

// namespaceVariable is the namespace variable's query, and the regex that
// picks the value out of each result line ("" for label_values).
type namespaceVariable struct{ query, regex string }

// namespaceQueryResultRegex takes the namespace out of a query_result line
// such as `{lock_namespace="jobs"} 1 1700000000000`.
const namespaceQueryResultRegex = `/lock_namespace="([^"]+)"/`

// namespaceSource lists namespaces from both the library and the exporter, so a
// namespace appears even when only one side reports it (the exporter also
// watches locks that are not taken through the library: Redisson, a cron
// script). Without selectors one label_values over both metric names does it.
// label_values takes a single selector, which cannot hold the library's
// matchers for one metric and the exporter's for the other, so with a
// selector set the variable runs an instant query over the dashboard's range
// instead (query_result, refreshed on every time range change).
func namespaceSource(sel selectors) namespaceVariable {
	if strings.TrimSpace(sel.library) == "" && strings.TrimSpace(sel.exporter) == "" {
		return namespaceVariable{query: "label_values(" +
			matchers(sel.withClusters(`__name__=~"`+metricHeld+`|`+metricKeys+`"`), "") + ", lock_namespace)"}
	}
	last := func(metric, extra string) string {
		return "last_over_time(" + metric + matchers(sel.cluster(), extra) + "[$__range])"
	}
	return namespaceVariable{
		query: "query_result(group by (lock_namespace) (" +
			last(metricHeld, sel.library) + " or " + last(metricKeys, sel.exporter) + "))",
		regex: namespaceQueryResultRegex,
	}
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
