package dashboards

import (
	"slices"

	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// settings is everything the builders read, resolved once from the shared pack
// config.
type settings struct {
	datasource      string // datasource preselected by the variable; "" lets Grafana pick its default
	datasourceRegex string // limits the datasource drop-down
	selectors       selectors
	refresh         string
	timeRange       string
	timezone        string
	tags            []string
	stalestKeys     int

	// window is the recording-rule window the panels read: the shortest
	// configured one, which reacts fastest and always exists.
	window model.Duration
	// abandonWindow is the window LockAbandonmentsSustained counts over.
	abandonWindow model.Duration

	// Alert thresholds, drawn on the panels that show what the alert reads.
	// An empty list means the alert is disabled and no line is drawn.
	notOwned       []level
	renewalFailure []level
	abandonments   []level
	waitP99        []level
	keyWithoutTTL  []level
	lapseRatio     []level
	takeoverRatio  []level
	stallFactor    float64 // 0: LockRenewalStalled disabled
}

// level is one alert threshold and the colour of its severity.
type level struct {
	value float64
	color string
}

func newSettings(cfg packconfig.Config) settings {
	d := cfg.Dashboards
	a := cfg.Alerts
	s := settings{
		datasource:      d.Datasource,
		datasourceRegex: d.DatasourceRegex,
		selectors: selectors{
			library: cfg.Selectors.Library, exporter: cfg.Selectors.Exporter, clusters: cfg.ClusterLabels,
		},
		refresh:        d.Refresh,
		timeRange:      d.TimeRange,
		timezone:       d.Timezone,
		tags:           d.Tags,
		stalestKeys:    d.StalestKeys,
		window:         slices.Min(cfg.RecordingWindows),
		notOwned:       ratioLevels(a.NotOwnedRatio),
		renewalFailure: ratioLevels(a.RenewalFailureRatio),
		lapseRatio:     lifecycleLevels(a.LapseRatio),
		takeoverRatio:  lifecycleLevels(a.TakeoverRatio),
	}
	s.abandonWindow = s.window
	if !a.Abandonments.Disabled {
		s.abandonWindow = a.Abandonments.Long
		s.abandonments = []level{{a.Abandonments.MinCount, severityColor(a.Abandonments.Severity)}}
	}
	if !a.WaitP99.Disabled {
		s.waitP99 = []level{{a.WaitP99.ThresholdSeconds, severityColor(a.WaitP99.Severity)}}
	}
	if !a.KeyWithoutTTL.Disabled {
		// The alert fires on any key without TTL; counts are whole numbers.
		s.keyWithoutTTL = []level{{1, severityColor(a.KeyWithoutTTL.Severity)}}
	}
	if !a.RenewalStalled.Disabled {
		s.stallFactor = a.RenewalStalled.Factor
	}
	return s
}

// ratioLevels draws both tiers of a multi-window ratio alert.
func ratioLevels(r packconfig.RatioAlert) []level {
	if r.Disabled {
		return nil
	}
	return []level{
		{r.Slow.Threshold, severityColor(r.Slow.Severity)},
		{r.Fast.Threshold, severityColor(r.Fast.Severity)},
	}
}

// lifecycleLevels draws a lifecycle ratio alert's threshold.
func lifecycleLevels(r packconfig.EventRatioAlert) []level {
	if r.Disabled {
		return nil
	}
	return []level{{r.Threshold, severityColor(r.Severity)}}
}

func severityColor(severity string) string {
	switch severity {
	case "critical":
		return "red"
	case "warning":
		return "orange"
	default:
		return "blue"
	}
}
