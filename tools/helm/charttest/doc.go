// Package charttest checks the lock-exporter Helm chart (deploy/helm/lock-exporter) with helm
// itself, built as a Go tool of this module: helm lint, helm template over a matrix of values,
// every rendered object decoded strictly into the Kubernetes and prometheus-operator Go types,
// the chart's rules equal to the pack's generated alerts/ for the same pack settings, and the
// committed examples under deploy/helm/examples up to date.
//
// It is a module of its own (tools/helm/go.mod) so that helm's Kubernetes modules never share a
// version selection with the Prometheus server of tools/go.mod or with the library.
package charttest
