package demo

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Lifecycle is what the exporter's change feed counted in the demo's namespaces, for every
// client alike: holds that lapsed (ended by expiry, in namespaces that do not end by expiry on
// purpose) and takeovers.
type Lifecycle struct {
	// Followed: the exporter serves lifecycle counters for the demo and follows every namespace
	// it serves them for. False before then, and while any is not followed.
	Followed          bool
	Lapses, Takeovers float64
}

// ReadLifecycle scrapes the metrics endpoint at url, where the demo serves the exporter's
// metrics, and sums its lifecycle counters.
func ReadLifecycle(ctx context.Context, url string) (Lifecycle, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Lifecycle{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Lifecycle{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Lifecycle{}, fmt.Errorf("demo: GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return Lifecycle{}, fmt.Errorf("demo: GET %s: %w", url, err)
	}
	return lifecycleFrom(families), nil
}

// lifecycleFrom sums the lifecycle counters of families, leaving out the namespaces declared
// to end by expiry: their expiries are how their locks are meant to end, not lapses.
func lifecycleFrom(families map[string]*dto.MetricFamily) Lifecycle {
	byExpiry := map[string]bool{}
	for _, m := range families["lock_exporter_lifecycle_ends_by_expiry"].GetMetric() {
		byExpiry[label(m, "lock_namespace")] = m.GetGauge().GetValue() == 1
	}
	following := families["lock_exporter_lifecycle_following"].GetMetric()
	lc := Lifecycle{Followed: len(following) > 0}
	for _, m := range following {
		lc.Followed = lc.Followed && m.GetGauge().GetValue() == 1
	}
	for _, m := range families["lock_key_ends_total"].GetMetric() {
		if label(m, "reason") == "expired" && !byExpiry[label(m, "lock_namespace")] {
			lc.Lapses += m.GetCounter().GetValue()
		}
	}
	for _, m := range families["lock_key_takeovers_total"].GetMetric() {
		if !byExpiry[label(m, "lock_namespace")] {
			lc.Takeovers += m.GetCounter().GetValue()
		}
	}
	return lc
}

// String is the status line's account of the exporter's lifecycle counters.
func (lc Lifecycle) String() string {
	if !lc.Followed && lc.Lapses == 0 && lc.Takeovers == 0 {
		return "exporter: lock lifecycle not followed"
	}
	s := fmt.Sprintf("exporter saw (any client): %s, %s",
		count(lc.Lapses, "lapse", "lapses"), count(lc.Takeovers, "takeover", "takeovers"))
	if !lc.Followed {
		s += " (not following now)"
	}
	return s
}
