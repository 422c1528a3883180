// Package helmchart generates the lock-exporter Helm chart, deploy/helm/lock-exporter, as part of
// the pack: the chart's templates, values and schema (the chart/ directory of this package,
// embedded, so an installed lockwatch-pack writes a whole chart without a checkout), its
// Chart.yaml stamped with the release, and the pack's rules and dashboards as the chart's files/.
//
// The chart's PrometheusRule and dashboard ConfigMaps read those files through .Files, so the
// rules have one implementation, the rules package: a different pack configuration gives a chart
// whose rules equal the alerts/ generated for it, and no template repeats rule logic. Alert
// descriptions hold Prometheus' own {{ $labels.… }} templates, which is another reason they live
// in files/: Helm does not render those.
//
// values.schema.json is made by Schema: values.base.schema.json (the chart's own values) with
// the exporter's sections (redis, scan, namespaces, targets) generated from exporterconfig's
// types, so a field the exporter gains is accepted by the chart without an edit here. Durations
// and settings with a fixed set of values (exporterconfig.Choices) are checked by the templates
// (lock-exporter.checkValues, reading the generated templates/_exporter_config.tpl), because
// helm runs the schema first and its messages cannot say why a value is refused.
//
// Edit the chart in chart/ and values.base.schema.json and run `make generate`; the drift test
// of cmd/lockwatch-pack fails while deploy/helm/lock-exporter differs.
package helmchart
