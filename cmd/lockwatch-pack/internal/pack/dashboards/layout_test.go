package dashboards

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestOverviewReadsTopDown pins the overview's rows to the order an on-call
// engineer asks questions in, and the panels the issue asks of each row.
func TestOverviewReadsTopDown(t *testing.T) {
	d := decode(t, OverviewUID, committed(t)[OverviewUID+".json"])
	var titles []string
	for _, r := range rowsOf(d) {
		titles = append(titles, r[0])
	}
	want := []string{"Health summary", "Acquisition", "Renewal", "Ownership", "Lock lifecycle (lock exporter)", "Store (lock exporter)"}
	if !slices.Equal(titles, want) {
		t.Fatalf("rows %q, want %q", titles, want)
	}
	byRow := panelsByRow(d)
	checks := []struct {
		row, panelType, reads string
	}{
		{"Health summary", "stat", metricHeld},
		{"Health summary", "stat", metricAbandoned},
		{"Health summary", "stat", ":lock_not_owned:"},
		{"Health summary", "stat", metricKeysWithoutTTL},
		{"Health summary", "stat", metricExporterUp},
		{"Health summary", "table", metricAlerts},
		{"Acquisition", "timeseries", metricAcquireWait + "_count"},
		{"Acquisition", "timeseries", ":lock_acquire_wait_seconds:p99_"},
		{"Acquisition", "heatmap", metricAcquireWait + "_bucket"},
		{"Renewal", "timeseries", metricRenewals},
		{"Renewal", "timeseries", ":lock_renewal_failures:"},
		{"Renewal", "timeseries", ":lock_abandoned:"},
		{"Ownership", "timeseries", ":lock_not_owned:"},
		{"Ownership", "timeseries", metricFencedWrites},
		{"Ownership", "timeseries", metricHeldSeconds + "_bucket"},
		{"Lock lifecycle (lock exporter)", "timeseries", metricKeyAcquisitions},
		{"Lock lifecycle (lock exporter)", "timeseries", metricKeyEnds},
		{"Lock lifecycle (lock exporter)", "timeseries", metricKeyTakeovers},
		{"Lock lifecycle (lock exporter)", "timeseries", metricLifecycleFollowing},
		{"Lock lifecycle (lock exporter)", "heatmap", metricKeyHoldDuration + "_bucket"},
		{"Store (lock exporter)", "timeseries", metricKeys + "{"},
		{"Store (lock exporter)", "timeseries", metricKeyTTLMin},
		{"Store (lock exporter)", "timeseries", metricKeyIdleMax},
		{"Store (lock exporter)", "table", metricKeyIdle + "{"},
		{"Store (lock exporter)", "table", metricKeyWithoutTTLIdle + "{"},
		{"Store (lock exporter)", "table", metricKeyHolderInfo + "{"},
		{"Store (lock exporter)", "timeseries", metricScrapeDuration},
	}
	for _, c := range checks {
		if !slices.ContainsFunc(byRow[c.row], func(p dashboard.Panel) bool {
			return p.Type == c.panelType && slices.ContainsFunc(exprsOf(p), func(e string) bool { return strings.Contains(e, c.reads) })
		}) {
			t.Errorf("row %q has no %s panel reading %s", c.row, c.panelType, c.reads)
		}
	}
	for _, p := range byRow["Health summary"] {
		if p.Type != "stat" && p.Type != "table" {
			t.Errorf("health summary panel %q is a %s; the summary is stats and the firing-alerts table", *p.Title, p.Type)
		}
	}
}

// TestStoreTablesSayWhatTheExporterDoes checks the stalest-keys table joins the holder info
// without dropping keys that have none, and that the scan-duration panel describes one pass over
// the keyspace rather than a scan per namespace.
func TestStoreTablesSayWhatTheExporterDoes(t *testing.T) {
	d := decode(t, OverviewUID, committed(t)[OverviewUID+".json"])
	stalest, ok := findPanel(d, "table", "Stalest keys")
	if !ok {
		t.Fatal("no Stalest keys table")
	}
	exprs := exprsOf(stalest)
	if len(exprs) != 1 || !strings.Contains(exprs[0], "group_left (holder)") || !strings.Contains(exprs[0], "or on (lock_namespace, key)") {
		t.Errorf("Stalest keys query %q: want the holder joined by group_left and the keys without one kept by or", exprs)
	}
	duration, ok := findPanel(d, "timeseries", "Exporter scan duration")
	if !ok {
		t.Fatal("no Exporter scan duration panel")
	}
	if desc := *duration.Description; !strings.Contains(desc, "One pass") || strings.Contains(desc, "scan each namespace") {
		t.Errorf("scan duration description %q: want the one-pass engine described", desc)
	}
}

func panelsByRow(d dashboard.Dashboard) map[string][]dashboard.Panel {
	rows := map[string][]dashboard.Panel{}
	current := ""
	for _, p := range d.Panels {
		if p.RowPanel != nil {
			current = *p.RowPanel.Title
			rows[current] = append(rows[current], p.RowPanel.Panels...)
			continue
		}
		rows[current] = append(rows[current], *p.Panel)
	}
	return rows
}

func exprsOf(p dashboard.Panel) []string {
	var exprs []string
	for _, target := range p.Targets {
		if q, ok := target.(*prometheus.Dataquery); ok {
			exprs = append(exprs, q.Expr)
		}
	}
	return exprs
}

// TestThresholdLinesFollowAlertConfig checks that a panel showing what an
// alert reads draws the alert's configured thresholds, and draws none when
// the alert is disabled.
func TestThresholdLinesFollowAlertConfig(t *testing.T) {
	type line struct {
		panel string
		want  func(packconfig.Config) []float64
	}
	ratio := func(r packconfig.RatioAlert) []float64 {
		if r.Disabled {
			return nil
		}
		return []float64{r.Slow.Threshold, r.Fast.Threshold}
	}
	lifecycle := func(r packconfig.EventRatioAlert) []float64 {
		if r.Disabled {
			return nil
		}
		return []float64{r.Threshold}
	}
	lines := []line{
		{"Not-owned ratio", func(c packconfig.Config) []float64 { return ratio(c.Alerts.NotOwnedRatio) }},
		{"Renewal failure ratio", func(c packconfig.Config) []float64 { return ratio(c.Alerts.RenewalFailureRatio) }},
		{"Acquire wait quantiles", func(c packconfig.Config) []float64 {
			if c.Alerts.WaitP99.Disabled {
				return nil
			}
			return []float64{c.Alerts.WaitP99.ThresholdSeconds}
		}},
		{"Abandonments per ", func(c packconfig.Config) []float64 {
			if c.Alerts.Abandonments.Disabled {
				return nil
			}
			return []float64{c.Alerts.Abandonments.MinCount}
		}},
		{"Lapse ratio", func(c packconfig.Config) []float64 { return lifecycle(c.Alerts.LapseRatio) }},
		{"Takeover ratio", func(c packconfig.Config) []float64 { return lifecycle(c.Alerts.TakeoverRatio) }},
		{"Keys without TTL", func(c packconfig.Config) []float64 {
			if c.Alerts.KeyWithoutTTL.Disabled {
				return nil
			}
			return []float64{1}
		}},
	}
	for variant, out := range outputs(t) {
		d := decode(t, OverviewUID, out.files[OverviewUID+".json"])
		for _, l := range lines {
			p, ok := findPanel(d, "timeseries", l.panel)
			if !ok {
				t.Errorf("%s: no time series panel titled %q…", variant, l.panel)
				continue
			}
			got := thresholdValues(p)
			want := l.want(out.cfg)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: panel %q draws thresholds %v, want %v from the alert config", variant, *p.Title, got, want)
			}
			if dashed := dashedThresholds(p); dashed != (len(want) > 0) {
				t.Errorf("%s: panel %q draws dashed threshold lines = %v, want %v", variant, *p.Title, dashed, len(want) > 0)
			}
		}
		stall, ok := findPanel(d, "timeseries", "Longest idle key")
		factor := strconv.FormatFloat(out.cfg.Alerts.RenewalStalled.Factor, 'f', -1, 64)
		hasLine := ok && slices.ContainsFunc(exprsOf(stall), func(e string) bool {
			return strings.HasPrefix(e, factor+" * ") && strings.Contains(e, metricExpectedRenewEvery)
		})
		if want := !out.cfg.Alerts.RenewalStalled.Disabled; hasLine != want {
			t.Errorf("%s: idle panel draws the %s × renew interval stall line = %v, want %v", variant, factor, hasLine, want)
		}
	}
}

func findPanel(d dashboard.Dashboard, panelType, titlePrefix string) (dashboard.Panel, bool) {
	for _, p := range panels(d) {
		if p.Type == panelType && strings.HasPrefix(*p.Title, titlePrefix) {
			return p, true
		}
	}
	return dashboard.Panel{}, false
}

// thresholdValues are the panel's threshold steps above the base colour.
func thresholdValues(p dashboard.Panel) []float64 {
	var vs []float64
	if p.FieldConfig == nil || p.FieldConfig.Defaults.Thresholds == nil {
		return nil
	}
	for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
		if s.Value != nil {
			vs = append(vs, *s.Value)
		}
	}
	return vs
}

func dashedThresholds(p dashboard.Panel) bool {
	custom, ok := p.FieldConfig.Defaults.Custom.(*timeseries.FieldConfig)
	return ok && custom.ThresholdsStyle != nil && custom.ThresholdsStyle.Mode == common.GraphThresholdsStyleModeDashed
}
