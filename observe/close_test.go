package observe

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Observers made and closed on one registry leave the shared families asking only the open
// ones: a closed Observer no longer reports its holds in lock_held_oldest_seconds, and the
// registry does not keep it (its tracker) reachable. (That its sweeps stop running is
// lockmetrics' TestRemovedCollectHookDoesNotRun.)
func TestClosedObserverLeavesTheSharedFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	open := func(t *testing.T) *Observer {
		t.Helper()
		o, err := New(Options{Registerer: reg, Namespaces: []Namespace{{Name: "jobs", Pattern: "jobs:*"}}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	acquire := func(o *Observer, key string) {
		o.BeginStrings([]string{"SET", key, "value-" + key, "PX", "60000", "NX"}).Done(Reply{})
	}
	oldest := func() float64 { return value(t, reg, "lock_held_oldest_seconds", "jobs", "") }

	closing := open(t)
	acquire(closing, "jobs:1")
	firstHeld := time.Now() // the first hold is at least this old
	staying := open(t)
	defer staying.Close()
	time.Sleep(500 * time.Millisecond)
	secondAsked := time.Now() // the second hold is at most this old
	acquire(staying, "jobs:2")
	// A lower bound is read before the scrape, an upper bound after it, so that a slow machine
	// cannot blur the two holds.
	if min, got := time.Since(firstHeld).Seconds(), oldest(); got < min {
		t.Fatalf("with both observers holding: %v, want the first hold's age (at least %v)", got, min)
	}
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	if got, max := oldest(), time.Since(secondAsked).Seconds(); got > max {
		t.Errorf("after the first observer closed: %v, want the open one's hold (at most %v)", got, max)
	}
	for range 100 {
		_ = open(t).Close()
	}
	if got, max := oldest(), time.Since(secondAsked).Seconds(); got > max {
		t.Errorf("after 100 observers opened and closed: %v, want the open one's hold (at most %v)", got, max)
	}
}
