// Package rules builds lockwatch's Prometheus recording and alerting rules from the pack
// configuration and renders them as the rule files committed in alerts/.
//
// Where to look: Generate (build_rules.go) is the pack.Generator; the recording rules, their
// names and windows are in recording_rules.go and recording_names.go; the alerts are in
// alert_rules.go (what every alert shares), library_alerts.go (on the lease library's metrics)
// and exporter_alerts.go (on the exporter's); render_rule_file.go writes the YAML.
//
// Every expression is parsed with the Prometheus PromQL parser before it is written, so a rule
// that does not parse cannot be generated, and it is written pretty-printed so reviews of the
// committed alerts/*.yml read like hand-written PromQL.
package rules
