package exporter

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a /scrape request for a configured target.
const (
	outcomeServed = "served" // scanned (or joined a scan) and answered
	outcomeBusy   = "busy"   // every scan slot stayed taken until the deadline: 503
)

// targetMetrics are the exporter's own account of /scrape, served on /metrics next to the Go
// and process metrics: how often each target was served or turned away for want of a scan slot
// (the signal to raise --scan.max-concurrent-targets), and how many requests named no
// configured target. Target names come from the configuration, so the label is bounded. They
// outlive reloads, so that counters do not restart with each one.
type targetMetrics struct {
	scrapes *prometheus.CounterVec
	refused prometheus.Counter

	reg        prometheus.Registerer
	mu         sync.Mutex
	registered bool     // on reg: from the first configuration with targets on
	names      []string // the targets whose series exist
}

// newTargetMetrics prepares the metrics; they are registered on reg by the first track of a
// configuration with targets, so that an exporter without targets serves none of them.
func newTargetMetrics(reg prometheus.Registerer) *targetMetrics {
	return &targetMetrics{
		scrapes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_exporter_target_scrapes_total",
			Help: "Scrapes of /scrape?target=NAME per configured target; outcome=busy when every scan slot (--scan.max-concurrent-targets) stayed taken until the scrape's deadline (answered 503).",
		}, []string{"target", "outcome"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lock_exporter_target_requests_refused_total",
			Help: "Requests to /scrape refused with 400: no target parameter, a name that is not a configured target, or another parameter.",
		}),
		reg: reg,
	}
}

// track makes the series of the configured targets exist, so that rate() and increase() see
// their first event, and drops those of targets no longer configured.
func (m *targetMetrics) track(names []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(names) > 0 && !m.registered {
		m.reg.MustRegister(m.scrapes, m.refused)
		m.registered = true
	}
	for _, gone := range m.names {
		if !slices.Contains(names, gone) {
			m.scrapes.DeleteLabelValues(gone, outcomeServed)
			m.scrapes.DeleteLabelValues(gone, outcomeBusy)
		}
	}
	for _, name := range names {
		m.scrapes.WithLabelValues(name, outcomeServed)
		m.scrapes.WithLabelValues(name, outcomeBusy)
	}
	m.names = slices.Clone(names)
}
