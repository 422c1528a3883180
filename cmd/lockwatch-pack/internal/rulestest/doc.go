// Package rulestest holds the Go tests that run promtool over the generated rules, so that
// `make test` covers them: the repository's own promtool unit tests (the *_test.yml files in
// rules_test/, written for the default pack) and the rule tests lockwatch-pack generates for
// any pack (alerts/tests/), for the committed pack and a customised one, on Prometheus 3.x and
// 2.x, including the mutation check that the generated tests fail on hand-broken rules.
//
// Run one file by hand with
//
//	go tool -modfile=tools/go.mod promtool test rules rules_test/not_owned_test.yml
//	go tool -modfile=tools/go.mod promtool test rules alerts/tests/*_test.yml
package rulestest
