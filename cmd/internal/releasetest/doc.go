// Package releasetest holds no code: its tests check what a release of the repository's
// modules gives an outside user, with nothing published. They serve the checkout's modules
// from a file-based module proxy (cmd/internal/testharness/modproxy) at the release in
// VERSION, then build a consumer module outside the repository and `go install` the
// commands, as a user would: no go.work, no replace. They also keep the modules' requirements
// on each other, and go.work's replace lines, at VERSION (docs/deploy.md#versioning).
package releasetest
