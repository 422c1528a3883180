package observe_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
	"github.com/lockwatch/lockwatch/observe"
)

// An adapter in another package (rueidisobserve's hook) holds its Call on its stack through
// BeginStringsOn and Finish: a lock cycle of rueidislock's shapes, one Call variable serving
// all six commands, is observed as with BeginStrings and Done; and the variable stays on the
// stack (Finish must not let it escape, as Done, which pools Calls, would).
func TestBeginStringsOnKeepsTheCallersCall(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := observe.New(observe.Options{Registerer: reg, Namespaces: []observe.Namespace{{Name: "jobs", Pattern: "*jobs:*"}}})
	if err != nil {
		t.Fatal(err)
	}
	pxat := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	var acquire, release [3][]string
	for part := range 3 {
		k := "lw:" + strconv.Itoa(part) + ":jobs:1"
		acquire[part] = []string{"EVALSHA", "3875d208d9e377969d2022550302cc83ad17b584", "1", k, "v", pxat}
		release[part] = []string{"EVALSHA", "9eb62214c9af87ae5f9a9f12bb4520281c0d2ae1", "1", k, "v"}
	}
	get := []string{"GET", "jobs:1"} // built once: a client's arguments are its own
	cycle := func() {
		var call observe.Call
		for _, args := range acquire {
			c := o.BeginStringsOn(&call, args)
			if c != &call {
				// (Printing either pointer would move call to the heap.)
				t.Fatalf("%v: BeginStringsOn did not return the caller's Call", args)
			}
			c.Finish(observe.Reply{})
		}
		for _, args := range release {
			o.BeginStringsOn(&call, args).Finish(observe.Reply{Int: 1, IsInt: true})
		}
		if o.BeginStringsOn(&call, get) != nil {
			t.Fatal("GET recognised")
		}
		o.BeginStringsOn(&call, get).Finish(observe.Reply{}) // nil: ignored
	}
	for range 101 {
		cycle()
	}
	if got := testkit.MetricValue(t, reg, "lock_releases_total", "lock_namespace", "jobs", "outcome", "ok"); got != 101 {
		t.Errorf("lock_releases_total{outcome=ok} = %v over 101 cycles", got)
	}
	// The Call itself costs nothing: a recognised command whose reply is NOSCRIPT (which the
	// tracker ignores, so that no pooled state of its own is counted here) allocates nothing
	// unless the caller's variable moved to the heap.
	noScript := observe.Reply{Err: errors.New("NOSCRIPT No matching script")}
	n := testing.AllocsPerRun(100, func() {
		var call observe.Call
		o.BeginStringsOn(&call, acquire[0]).Finish(noScript)
	})
	if n != 0 {
		t.Errorf("%v allocations per command, want 0: the caller's Call moved to the heap", n)
	}
	if got := testkit.MetricValue(t, reg, "lock_held", "lock_namespace", "jobs"); got != 0 {
		t.Errorf("lock_held = %v after the cycles", got)
	}
	if n := o.Tracked(); n != 0 {
		t.Errorf("%d locks tracked after the cycles", n)
	}
}
