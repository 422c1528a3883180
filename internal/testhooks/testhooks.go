// Package testhooks reaches, from the tests of the repository's other modules, what a library
// package's own tests set through unexported fields. The OTel tests of observe live in the
// integration module (so that the OTel SDK stays out of the library's go.mod) and need the
// Observer's clock to compare two metrics paths at identical timestamps.
//
// Only code under github.com/lockwatch/lockwatch can import an internal package, so nothing
// here is part of the library's API. The library packages fill the variables in at init;
// a variable is nil until the package that owns it is linked.
package testhooks

import "time"

// SetObserverClock replaces the clock of an *observe.Observer, given as any because observe
// imports this package and not the other way round. Set it before the Observer sees its first
// command.
var SetObserverClock func(observer any, now func() time.Time)
