package exporter

import "github.com/prometheus/client_golang/prometheus"

// Outcomes of a /scrape request for a configured target.
const (
	outcomeServed = "served" // scanned (or joined a scan) and answered
	outcomeBusy   = "busy"   // every scan slot stayed taken until the deadline: 503
)

// targetMetrics are the exporter's own account of /scrape, served on /metrics next to the Go
// and process metrics: how often each target was served or turned away for want of a scan slot
// (the signal to raise --scan.max-concurrent-targets), and how many requests named no
// configured target. Target names come from the configuration, so the label is bounded.
type targetMetrics struct {
	scrapes *prometheus.CounterVec
	refused prometheus.Counter
}

func newTargetMetrics(reg prometheus.Registerer, ts *targetSet) *targetMetrics {
	m := &targetMetrics{
		scrapes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lock_exporter_target_scrapes_total",
			Help: "Scrapes of /scrape?target=NAME per configured target; outcome=busy when every scan slot (--scan.max-concurrent-targets) stayed taken until the scrape's deadline (answered 503).",
		}, []string{"target", "outcome"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lock_exporter_target_requests_refused_total",
			Help: "Requests to /scrape refused with 400: no target parameter, a name that is not a configured target, or another parameter.",
		}),
	}
	// Every series exists from the start, so rate() and increase() see the first event.
	for _, name := range ts.order {
		m.scrapes.WithLabelValues(name, outcomeServed)
		m.scrapes.WithLabelValues(name, outcomeBusy)
	}
	reg.MustRegister(m.scrapes, m.refused)
	return m
}
