// Package e2e proves the whole chain with real servers on loopback: the lease library (the
// demo workload) and lock-exporter are scraped by a real Prometheus that evaluates the pack's
// generated rules and sends alerts to a real Alertmanager routed by deploy/alertmanager, whose
// webhooks reach a receiver in the test. A second test pushes the same library metrics over
// OTLP/HTTP (lease with an OTel MeterProvider) into Prometheus's OTLP receiver and checks that
// the unchanged rules fire the same alert as for the scraped workload.
//
// It runs only with LOCKWATCH_E2E=1 (`make e2e`); it needs redis-server and the
// prometheus-alertmanager binary (Debian package prometheus-alertmanager) and builds Prometheus
// from tools/go.mod.
package e2e
