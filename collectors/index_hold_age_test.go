package collectors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/internal/lockkeys"
	"github.com/lockwatch/lockwatch/internal/testharness/redistest"
)

// TestIndexHoldAges: a namespace that declares an expected max hold is served by the index, and
// its hold ages follow the holder records, also when only the holder key is written (a new
// acquisition time) or deleted, equal to a fresh walk's each time.
func TestIndexHoldAges(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	c := srv.Client(t)
	namespaces := []Namespace{{Name: "held", Pattern: "jobs:*", ExpectedMaxHold: time.Minute}}
	record := func(lock string, ago time.Duration) {
		t.Helper()
		v := fmt.Sprintf("worker-1 pid 7\t%d", time.Now().Add(-ago).UnixMilli())
		if err := c.Set(ctx, lockkeys.Holder(lock), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, ago := range []time.Duration{30 * time.Second, 10 * time.Second} {
		lock := fmt.Sprintf("jobs:%d", i)
		if err := c.Set(ctx, lock, "token", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		record(lock, ago)
	}
	if err := c.Set(ctx, "jobs:unrecorded", "token", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	s := indexed(t, c, namespaces)
	check := func(step string, wantMax time.Duration, wantHeld int) {
		t.Helper()
		start := time.Now()
		res := waitCurrent(t, s)
		ns := res.Namespaces[0]
		if ns.Mode != modeIndex {
			t.Fatalf("%s: mode %s/%s, want index", step, ns.Mode, ns.ModeReason)
		}
		if wantHeld > 0 && (!ns.HasHeld || absDur(ns.MaxHeld-wantMax) > 2*time.Second) || wantHeld == 0 && ns.HasHeld {
			t.Errorf("%s: max held %v (%v), want about %v", step, ns.MaxHeld, ns.HasHeld, wantMax)
		}
		if len(ns.LongestHeld) != wantHeld {
			t.Errorf("%s: %d keys by hold age, want %d", step, len(ns.LongestHeld), wantHeld)
		}
		walk := freshWalk(t, c, namespaces)
		for _, d := range differences(res, walk, time.Since(start)+5*time.Millisecond) {
			t.Errorf("%s: %s", step, d)
		}
	}
	check("build", 30*time.Second, 2)
	record("jobs:0", 2*time.Second) // a new acquisition: only the holder key is written
	check("new acquisition", 10*time.Second, 2)
	if err := c.Del(ctx, lockkeys.Holder("jobs:1")).Err(); err != nil {
		t.Fatal(err)
	}
	check("holder key deleted", 2*time.Second, 1)
	if err := c.Del(ctx, "jobs:0").Err(); err != nil {
		t.Fatal(err)
	}
	check("lock released, holder key left behind", 0, 0)
}
