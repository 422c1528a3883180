package lockmetrics

import (
	"testing"

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
