// Package testkit holds the helpers several of lockwatch's test packages need: a goroutine-safe
// output buffer, the checkout root and its go command, binaries built from the checkout, a
// throw-away PKI, and the exporter's documented least-privilege ACL.
//
// It is for tests only: it takes testing.TB, so product packages must not import it.
package testkit
