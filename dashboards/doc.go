// Package dashboards builds lockwatch's Grafana dashboards as code with the
// grafana-foundation-sdk and renders them to the JSON committed next to this
// file. Generate is the single entry point; cmd/lockwatch-pack calls it with the
// same pack config that drives the alert rules, so panel threshold lines and
// alert thresholds cannot drift apart.
package dashboards
