// Package otel holds the tests of the library's OpenTelemetry path that need the OTel SDK:
// lease and observe recording through an SDK MeterProvider, compared series by series with
// their client_golang path after Prometheus' OTLP translation, internal/lockmetrics'
// instruments pinned to the metric contract, the metrics-path benchmarks, and runnable
// examples of an application that builds its own provider.
//
// They live in the integration module so that the root module, which library users require,
// lists no OTel SDK or exporter in its go.mod: lease and observe link only the OTel metric API
// (their own tests check that). The package has no API.
package otel
