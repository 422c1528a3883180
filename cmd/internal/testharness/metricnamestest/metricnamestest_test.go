package metricnamestest

import (
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestGatheredCoversTheContract checks the gathered set against the metric contract of the
// brief and the names agreed between the helpers.
func TestGatheredCoversTheContract(t *testing.T) {
	got := Gathered(t)
	contract := []string{
		// lease library
		"lock_acquire_wait_seconds_bucket", "lock_acquire_wait_seconds_sum", "lock_acquire_wait_seconds_count",
		"lock_renewals_total", "lock_releases_total", "lock_abandoned_total",
		"lock_held_seconds_bucket", "lock_held_seconds_sum", "lock_held_seconds_count",
		"lock_held", "lock_fenced_writes_total",
		// exporter
		"lock_keys", "lock_keys_without_ttl", "lock_key_ttl_min_seconds", "lock_key_idle_max_seconds",
		"lock_key_idle_seconds", "lock_exporter_up", "lock_exporter_scrape_duration_seconds",
		"lock_exporter_keys_truncated", "lock_exporter_build_info", "lock_key_holder_info",
		// agreed additions
		"lock_expected_ttl_seconds", "lock_expected_renew_interval_seconds", "lock_exporter_scrape_complete",
	}
	for _, name := range contract {
		if !got[name] {
			t.Errorf("%s is not exposed", name)
		}
	}
	// Histogram families appear only expanded.
	for _, name := range []string{"lock_acquire_wait_seconds", "lock_held_seconds"} {
		if got[name] {
			t.Errorf("histogram %s listed unexpanded", name)
		}
	}
}

func TestSampleNames(t *testing.T) {
	tests := []struct {
		typ  dto.MetricType
		want []string
	}{
		{dto.MetricType_COUNTER, []string{"m"}},
		{dto.MetricType_GAUGE, []string{"m"}},
		{dto.MetricType_UNTYPED, []string{"m"}},
		{dto.MetricType_HISTOGRAM, []string{"m_bucket", "m_sum", "m_count"}},
		{dto.MetricType_GAUGE_HISTOGRAM, []string{"m_bucket", "m_sum", "m_count"}},
		{dto.MetricType_SUMMARY, []string{"m", "m_sum", "m_count"}},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			got := SampleNames(&dto.MetricFamily{Name: proto.String("m"), Type: tt.typ.Enum()})
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
