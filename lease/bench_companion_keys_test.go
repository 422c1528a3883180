package lease

import "testing"

// BenchmarkCompanionKeys prices the companion keys against the plain lock in one run: an
// uncontended Acquire + Release per iteration, each parallel goroutine on its own key, with
// fencing (fence key), holder recording (holder key, a script instead of SET NX), or both.
func BenchmarkCompanionKeys(b *testing.B) {
	benchAcquireReleaseCases(b, []acquireReleaseCase{
		{name: "plain"},
		{name: "fencing", policy: Policy{Fencing: true}},
		{name: "holder", policy: Policy{RecordHolder: true}},
		{name: "fencing+holder", policy: Policy{Fencing: true, RecordHolder: true}},
	})
}
