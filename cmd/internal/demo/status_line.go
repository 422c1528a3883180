package demo

import (
	"fmt"
	"math"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// libraryTotals are the library counters summed over the demo's namespaces, read from the registry
// the workload serves, so the status line says what /metrics says.
type libraryTotals struct {
	Held            float64
	Acquired, Busy  float64
	RenewFailed     float64
	NotOwned        float64 // renewals and releases
	Abandoned       float64
	FencedRejected  float64
	AcquireAttempts float64
}

// totals gathers the workload's registry.
func (w *Workload) totals() (libraryTotals, error) {
	families, err := w.reg.Gather()
	if err != nil {
		return libraryTotals{}, err
	}
	var t libraryTotals
	for _, f := range families {
		for _, m := range f.GetMetric() {
			t.add(f.GetName(), label(m, "outcome"), m)
		}
	}
	return t, nil
}

// add counts one series m of the metric name into the totals it belongs to, if any.
func (t *libraryTotals) add(name, outcome string, m *dto.Metric) {
	switch name {
	case "lock_held":
		t.Held += m.GetGauge().GetValue()
	case "lock_acquire_wait_seconds":
		t.addAcquires(outcome, float64(m.GetHistogram().GetSampleCount()))
	default:
		t.addEvents(name, outcome, m.GetCounter().GetValue())
	}
}

// addAcquires counts n acquire attempts that ended with outcome.
func (t *libraryTotals) addAcquires(outcome string, n float64) {
	t.AcquireAttempts += n
	switch outcome {
	case "acquired":
		t.Acquired += n
	case "busy":
		t.Busy += n
	}
}

// addEvents counts n events of the counter name that ended with outcome.
func (t *libraryTotals) addEvents(name, outcome string, n float64) {
	switch {
	case name == "lock_renewals_total" && outcome == "failed":
		t.RenewFailed += n
	case name == "lock_renewals_total" && outcome == "not_owned",
		name == "lock_releases_total" && outcome == "not_owned":
		t.NotOwned += n
	case name == "lock_abandoned_total":
		t.Abandoned += n
	case name == "lock_fenced_writes_total" && outcome == "rejected":
		t.FencedRejected += n
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// StatusLine is one line of what the workload has done: the uptime, what is true now (leases
// held), the lease library's totals since the demo started, what the other languages' clients
// reported and what the exporter's lifecycle counters saw (lc), whether turbulence (the
// injected faults) is on, and how many repeated warnings were counted instead of printed.
func (w *Workload) StatusLine(lc Lifecycle) string {
	t, err := w.totals()
	if err != nil {
		return fmt.Sprintf("demo: status unavailable: %v", err)
	}
	line := fmt.Sprintf("%s | now: %s held | since start: %s, %s, %s, %s, %s, %s | %s | %s | %s",
		w.uptime().Truncate(time.Second),
		count(t.Held, "lease", "leases"),
		count(t.Acquired, "acquire", "acquires"), count(t.Busy, "busy", "busy"),
		count(t.RenewFailed, "failed renew", "failed renews"),
		count(t.NotOwned, "not-owned renew/release", "not-owned renews/releases"),
		count(t.Abandoned, "abandoned", "abandoned"),
		count(t.FencedRejected, "fenced write rejected", "fenced writes rejected"),
		w.otherClientsStatus(), lc, w.turbulenceState())
	if n := w.warnings.repeats(); n > 0 {
		line += " | " + count(float64(n), "repeated warning", "repeated warnings") + " not shown"
	}
	return line
}

// otherClientsStatus is what the redis-py and Redisson processes' clients reported: holds
// taken, and releases refused as not owned because the lock had lapsed.
func (w *Workload) otherClientsStatus() string {
	var acquired, notOwned int64
	for _, o := range w.others {
		acquired += o.tally.acquired.Load()
		notOwned += o.tally.notOwned.Load()
	}
	return fmt.Sprintf("redis-py/Redisson: %s, %s refused as not owned",
		count(float64(acquired), "hold", "holds"), count(float64(notOwned), "release", "releases"))
}

// turbulenceState says whether faults are being injected.
func (w *Workload) turbulenceState() string {
	switch {
	case w.stopped.Load():
		return "stopped" // the final line: no fault is being injected any more
	case !w.turbulence.Load():
		return "turbulence off"
	}
	return "turbulence on"
}

// count writes a whole-number counter value with the word that fits it: "1 lease", "3 leases".
// Counters and gauges are float64 but count events here, so no fraction is shown.
func count(v float64, singular, plural string) string {
	n := int64(math.Round(v))
	if n == 1 {
		return "1 " + singular
	}
	return strconv.FormatInt(n, 10) + " " + plural
}

// StatusLegend explains the status line once, under the banner.
func (w *Workload) StatusLegend() []string {
	return []string{
		"Status every few seconds: \"now\" is the current value (leases held at this moment);",
		"  \"since start\" are totals counted since the demo started (they only grow).",
		"  redis-py/Redisson: what those clients told their applications (a release refused as not",
		"  owned is a lock that lapsed); \"exporter saw\" counts lapses and takeovers of every",
		"  client from the exporter's change feed (lock_key_ends_total{reason=\"expired\"},",
		"  lock_key_takeovers_total), as the lapse and takeover alerts read them.",
		fmt.Sprintf("Turbulence is the demo's injected trouble, repeating every %s: network partitions, slow", w.opts.TurbulencePeriod),
		"  links, paused workers and a lock without expiry, so every alert's signal shows up.",
	}
}

// NextSteps are what to try while the demo runs: look at the demo's locks the way an operator
// would, and load the dashboards and rules that read these metrics. exporter is the command that
// runs lock-exporter here (a path that exists, or `go run ./cmd/lock-exporter`).
func NextSteps(redisAddr, metricsAddr, exporter string, namespaces []Namespace) []string {
	ns := namespaces[0]
	return []string{
		"Next steps (in another terminal):",
		fmt.Sprintf("  inspect live locks: %s inspect --redis.addr %s --namespace '%s=%s'", exporter, redisAddr, ns.Name, ns.Pattern),
		fmt.Sprintf("  metrics:            curl -s http://%s/metrics | grep -E '^lock_(abandoned_total|keys_without_ttl|renewals_total|key_ends_total|key_takeovers_total)'", metricsAddr),
		"  dashboards:         import dashboards-import/lockwatch-overview.json into Grafana (docs/dashboards.md)",
		"  alert rules:        load alerts/*.yml into a Prometheus scraping the metrics URL (docs/deploy.md)",
	}
}
