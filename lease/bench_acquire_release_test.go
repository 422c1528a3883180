package lease

import "testing"

// BenchmarkAcquireRelease measures an uncontended Acquire + Release round: each parallel
// goroutine works on its own key, with the default policy (renewer armed and stopped).
func BenchmarkAcquireRelease(b *testing.B) {
	benchAcquireReleaseCases(b, []acquireReleaseCase{
		{name: "metrics=on", metrics: true},
		{name: "metrics=off"},
		{name: "metrics=on,fencing=on", metrics: true, policy: Policy{Fencing: true}},
	})
}
