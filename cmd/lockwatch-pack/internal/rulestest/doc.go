// Package rulestest holds the Go tests that run the promtool unit tests of the generated rules
// (the *_test.yml files in the repository's rules_test/ directory, beside alerts/) and check
// that they cover every rule, so that `make test` covers them.
//
// Run one file by hand with
//
//	go tool -modfile=tools/go.mod promtool test rules rules_test/not_owned_test.yml
package rulestest
