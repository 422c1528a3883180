package dashboards

import "strings"

// Variable references as they appear in queries. Every multi-value variable
// uses a regex matcher (=~) so that "All" (rendered as .*) and multi-selection
// both work.
const (
	varDatasource  = "datasource"
	varJob         = "job"
	varInstance    = "instance"
	varNamespace   = "lock_namespace"
	varExporterJob = "exporter_job"
)

// selectors renders the label matchers for the kinds of series a panel can
// read. library and exporter are the operator's own selectors from the pack
// config (for example `cluster="prod"`), appended to the raw series' matchers.
type selectors struct {
	library  string
	exporter string
	// clusters are the configured cluster labels; each is also a dashboard
	// variable of the same name that every selector filters on.
	clusters []string
}

// cluster returns a regex matcher on each cluster variable. Their All is .*,
// so series that lack the label (one Prometheus per cluster, nothing added)
// still show.
func (s selectors) cluster() []string {
	var ms []string
	for _, l := range s.clusters {
		ms = append(ms, l+`=~"$`+l+`"`)
	}
	return ms
}

// withClusters puts the cluster matchers in front of list.
func (s selectors) withClusters(list ...string) []string {
	return append(s.cluster(), list...)
}

// lib matches per-process series emitted by the lease library.
func (s selectors) lib(more ...string) string {
	return matchers(append(s.withClusters(
		`job=~"$job"`, `instance=~"$instance"`, `lock_namespace=~"$lock_namespace"`,
	), more...), s.library)
}

// rule matches recording-rule output. The rules already applied the
// configured library selector to their input and keep only the cluster
// labels, job and lock_namespace, so matching on anything else (instance, or
// a label from the selector) would select nothing.
func (s selectors) rule() string {
	return matchers(s.withClusters(`job=~"$job"`, `lock_namespace=~"$lock_namespace"`), "")
}

// store matches per-namespace series from the exporter.
func (s selectors) store(more ...string) string {
	return matchers(append(s.withClusters(
		`job=~"$exporter_job"`, `lock_namespace=~"$lock_namespace"`,
	), more...), s.exporter)
}

// exporterProcess matches exporter series that carry no namespace.
func (s selectors) exporterProcess() string {
	return matchers(s.withClusters(`job=~"$exporter_job"`), s.exporter)
}

// matchers renders a brace-enclosed matcher list, or nothing when there is no
// matcher at all.
func matchers(list []string, extra string) string {
	if extra = strings.TrimSpace(extra); extra != "" {
		list = append(list, extra)
	}
	if len(list) == 0 {
		return ""
	}
	return "{" + strings.Join(list, ", ") + "}"
}

// alerts matches the lockwatch alerts firing for the selected namespaces (and
// clusters). Alerts without a namespace, such as LockExporterRedisDown, match
// the empty alternative and are always listed.
func (s selectors) alerts() string {
	return matchers(s.withClusters(
		`alertname=~"Lock.*"`, `alertstate="firing"`, `lock_namespace=~"$lock_namespace|"`,
	), "")
}
