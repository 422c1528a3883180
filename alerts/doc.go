// Package alerts builds lockwatch's Prometheus recording and alerting rules from the pack
// configuration (internal/packconfig) and renders them as rule files.
//
// Every expression is parsed with the Prometheus PromQL parser before it is written, so a rule
// that does not parse cannot be generated, and it is written pretty-printed so reviews of the
// committed alerts/*.yml read like hand-written PromQL. The committed files are the output for
// packconfig.Default(); a test regenerates them in memory and fails on any drift.
package alerts
