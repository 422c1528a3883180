package lockmetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegisterTwiceSharesFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Register(reg)
	if err != nil {
		t.Fatalf("second Register on one registry: %v", err)
	}
	if a.Held != b.Held || a.AcquireWait != b.AcquireWait || a.FencedWrites != b.FencedWrites {
		t.Fatal("second Register built new families instead of sharing the registered ones")
	}
}

func TestRegisterRejectsConflictingFamily(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "lock_renewals_total", Help: "a gauge"}))
	if _, err := Register(reg); err == nil {
		t.Fatal("Register accepted a registry where lock_renewals_total is a different metric")
	}
}

// (The OTel instruments' tests that need an SDK MeterProvider are in integration/otel.)
func TestNewInstrumentsNilProvider(t *testing.T) {
	if _, err := NewInstruments(nil); err == nil {
		t.Fatal("NewInstruments(nil) returned no error")
	}
}

// A producer that unbinds (a closed lease Client) is no longer asked for its oldest hold: the
// namespace reports the producers still bound, 0 once none is, and a registry shared by many
// short-lived producers keeps none of the closed ones.
func TestUnbindRemovesTheProducersOldestHold(t *testing.T) {
	reg := prometheus.NewRegistry()
	f, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	holding := func(age time.Duration) OldestFunc {
		return func() (time.Duration, bool) { return age, true }
	}
	old := f.Bind("jobs", LeaseScope, holding(time.Minute))
	young := f.Bind("jobs", LeaseScope, holding(time.Second))
	for range 1000 {
		f.Bind("jobs", LeaseScope, holding(time.Hour)).Unbind()
	}
	oldest := func() float64 {
		t.Helper()
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range fams {
			if mf.GetName() == "lock_held_oldest_seconds" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no lock_held_oldest_seconds")
		return 0
	}
	for _, step := range []struct {
		unbind *Series
		want   float64
	}{
		{nil, 60},  // the 1000 unbound ones, each an hour old, count no more
		{old, 1},   // the minute-old producer closed: the second-old one is left
		{young, 0}, // none left: the series stays, at 0
		{young, 0}, // a second Unbind is harmless
	} {
		step.unbind.Unbind()
		if got := oldest(); got != step.want {
			t.Fatalf("lock_held_oldest_seconds = %v, want %v", got, step.want)
		}
	}
	if n := len(f.HeldOldest.sources["jobs"]); n != 0 {
		t.Errorf("%d producers still bound after every Unbind", n)
	}
}

// A collect hook removed (its producer closed) no longer runs; the others still do, once each.
func TestRemovedCollectHookDoesNotRun(t *testing.T) {
	var h CollectHooks
	var kept, removed int
	h.BeforeCollect(func() { kept++ })
	remove := h.BeforeCollect(func() { removed++ })
	for range 100 {
		h.BeforeCollect(func() { removed++ })()
	}
	h.Run()
	remove()
	remove() // a second remove is harmless
	h.Run()
	if kept != 2 || removed != 1 {
		t.Errorf("kept hook ran %d times (want 2), removed hooks %d (want 1, before the removal)", kept, removed)
	}
	if len(h.hooks) != 1 {
		t.Errorf("%d hooks left, want 1", len(h.hooks))
	}
}

// TestHeldSecondsHelpNamesEveryEnd: lock_held_seconds' HELP (and the OTel description, the same
// text) names every end of a hold it observes, as docs/metrics.md lists them: release,
// abandonment, MaxHold and the lapse of a lease nothing renews (observe: the expiry deadline).
// It said "from acquire to release or abandonment", as if holds cut by MaxHold or by expiry
// were not counted.
func TestHeldSecondsHelpNamesEveryEnd(t *testing.T) {
	for _, end := range []string{"release", "abandon", "MaxHold", "expir"} {
		if !strings.Contains(heldSecondsHelp, end) {
			t.Errorf("lock_held_seconds HELP %q does not name %q", heldSecondsHelp, end)
		}
	}
}
