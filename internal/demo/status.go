package demo

import (
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Totals are the library counters summed over the demo's namespaces, read from the registry
// the workload serves, so the status line says what /metrics says.
type Totals struct {
	Held            float64
	Acquired, Busy  float64
	RenewFailed     float64
	NotOwned        float64 // renewals and releases
	Abandoned       float64
	FencedRejected  float64
	AcquireAttempts float64
}

// Totals gathers the workload's registry.
func (w *Workload) Totals() (Totals, error) {
	families, err := w.reg.Gather()
	if err != nil {
		return Totals{}, err
	}
	var t Totals
	for _, f := range families {
		for _, m := range f.GetMetric() {
			outcome := label(m, "outcome")
			switch f.GetName() {
			case "lock_held":
				t.Held += m.GetGauge().GetValue()
			case "lock_acquire_wait_seconds":
				n := float64(m.GetHistogram().GetSampleCount())
				t.AcquireAttempts += n
				switch outcome {
				case "acquired":
					t.Acquired += n
				case "busy":
					t.Busy += n
				}
			case "lock_renewals_total":
				switch outcome {
				case "failed":
					t.RenewFailed += m.GetCounter().GetValue()
				case "not_owned":
					t.NotOwned += m.GetCounter().GetValue()
				}
			case "lock_releases_total":
				if outcome == "not_owned" {
					t.NotOwned += m.GetCounter().GetValue()
				}
			case "lock_abandoned_total":
				t.Abandoned += m.GetCounter().GetValue()
			case "lock_fenced_writes_total":
				if outcome == "rejected" {
					t.FencedRejected += m.GetCounter().GetValue()
				}
			}
		}
	}
	return t, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// StatusLine is one short line of what the workload has done so far.
func (w *Workload) StatusLine() string {
	t, err := w.Totals()
	if err != nil {
		return fmt.Sprintf("demo: status unavailable: %v", err)
	}
	turbulence := "on"
	if !w.turbulence.Load() {
		turbulence = "off"
	}
	return fmt.Sprintf("%s held %.0f | acquired %.0f busy %.0f | renew failed %.0f | not owned %.0f | abandoned %.0f | fenced writes rejected %.0f | turbulence %s",
		w.Uptime().Truncate(time.Second), t.Held, t.Acquired, t.Busy, t.RenewFailed, t.NotOwned, t.Abandoned, t.FencedRejected, turbulence)
}
