// Package dashboards builds lockwatch's Grafana dashboards as code with the
// grafana-foundation-sdk and renders them to the JSON committed in the
// checkout's dashboards/ directory.
//
// Where to look: Generate (build_dashboards.go) is the pack.Generator;
// dashboard_base.go is what every dashboard shares, overview_dashboard.go and
// instances_dashboard.go lay out the two dashboards, panels.go builds the
// panels, selectors.go and variables.go the label matchers and template
// variables, settings.go resolves the pack configuration once, and
// metric_names.go names the metrics the panels read.
//
// cmd/lockwatch-pack runs Generate with the same pack config that drives the
// rules, so panel threshold lines and alert thresholds cannot drift apart.
package dashboards
