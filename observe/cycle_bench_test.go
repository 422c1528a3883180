package observe

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkCycle is one uncontended lock cycle (SET NX PX, compare-and-delete) through Begin
// and Done with no server: the hook's own cost per cycle, on a key in one namespace and on a
// key two overlapping namespaces both count.
//
//	go test -run '^$' -bench Cycle -benchmem ./observe/
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct{ name, prefix string }{{"one-namespace", "jobs:"}, {"two-namespaces", "jobs:urgent:"}} {
		b.Run(c.name, func(b *testing.B) {
			o, _, clock := newTestObserver(b, Options{Namespaces: []Namespace{
				{Name: "jobs", Pattern: "jobs:*"}, {Name: "urgent", Pattern: "jobs:urgent:*"}, {Name: "approvals", Pattern: "approval:*"},
			}})
			keys := make([]string, 64)
			for i := range keys {
				keys[i] = c.prefix + strconv.Itoa(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := keys[i%len(keys)]
				do(o, clock, time.Millisecond, ok, "set", k, "v", "nx", "px", "10000")
				do(o, clock, time.Millisecond, one, "eval", testRelease, "1", k, "v")
			}
		})
	}
}
