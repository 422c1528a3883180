// Package ruletests writes promtool unit tests for the rules the pack generates, beside them in
// alerts/tests/, for the user's own configuration: their selectors, cluster labels, runbook URL
// and thresholds.
//
// The tests are not copies of the rules. Their input series are written from the metric
// contract (docs/metrics.md: names, label sets, what a counter counts), scaled by the
// configuration: a ratio at twice an alert's threshold, one at half of it, traffic under its
// guard, a burst shorter than its for: duration, recovery. What each alert must then do is
// derived from what the alert means (fires when the ratio is above the threshold over both
// windows for for:, …), never by evaluating or copying its expression, so a rule whose threshold
// or selector was changed by hand fails them. Expected alerts carry what a user sees: the labels
// the alert keeps, the summary, the description rendered as Prometheus renders it, and the
// runbook_url built from the configured base URL.
//
// Where to look: Generate (generate.go) is the pack.Generator; timeline.go says when an alert
// must be firing, silent, or cannot be asserted; labels.go makes series that the configured
// selectors do and do not select; library.go, exporter.go and lifecycle.go hold the scenarios.
package ruletests
