// Package rulestest holds the promtool unit tests of the generated rules (the *_test.yml files
// next to this one) and the Go tests that run them, so that `go test ./...` covers them.
//
// Run one file by hand with
//
//	go tool -modfile=tools/go.mod promtool test rules rules_test/not_owned_test.yml
package rulestest
