// Package testkit holds the helpers several of lockwatch's test packages need: a goroutine-safe
// output buffer, the checkout root and its go command, binaries built from the checkout, a
// throw-away PKI, a StallMeter that measures how starved the process is (so that wall-clock bounds
// can be derived from it), and the exporter's documented least-privilege ACL.
//
// It is for tests only: it takes testing.TB, so product packages must not import it.
package testkit
