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
}

// lib matches per-process series emitted by the lease library.
func (s selectors) lib(more ...string) string {
	return matchers(append([]string{
		`job=~"$job"`, `instance=~"$instance"`, `lock_namespace=~"$lock_namespace"`,
	}, more...), s.library)
}

// rule matches recording-rule output. The rules already applied the
// configured library selector to their input and keep only job and
// lock_namespace, so matching on anything else (instance, or a cluster label
// from the selector) would select nothing.
func (s selectors) rule() string {
	return matchers([]string{`job=~"$job"`, `lock_namespace=~"$lock_namespace"`}, "")
}

// store matches per-namespace series from the exporter.
func (s selectors) store(more ...string) string {
	return matchers(append([]string{
		`job=~"$exporter_job"`, `lock_namespace=~"$lock_namespace"`,
	}, more...), s.exporter)
}

// exporterProcess matches exporter series that carry no namespace.
func (s selectors) exporterProcess() string {
	return matchers([]string{`job=~"$exporter_job"`}, s.exporter)
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
