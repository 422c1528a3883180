package lease

import "testing"

// BenchmarkAcquireRelease measures an uncontended Acquire + Release round: each parallel
// goroutine works on its own key, with the default policy (renewer armed and stopped). The
// batching row is Options.Batching; its gain grows with the number of concurrent callers, so
// compare it with -cpu 16 as well as the default.
func BenchmarkAcquireRelease(b *testing.B) {
	benchAcquireReleaseCases(b, []acquireReleaseCase{
		{name: "metrics=on", metrics: true},
		{name: "metrics=off"},
		{name: "metrics=on,fencing=on", metrics: true, policy: Policy{Fencing: true}},
		{name: "metrics=on,batching=on", metrics: true, opts: Options{Batching: true}},
	})
}
