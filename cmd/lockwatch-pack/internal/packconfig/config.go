// Package packconfig holds every tunable of the generated monitoring pack (alerting and recording
// rules, dashboards) in one struct with documented defaults, and loads user overrides from YAML.
//
// A user customises the pack without writing Go: put only the keys to change in a YAML file and
// run `lockwatch-pack --config FILE`. Keys not given keep their defaults; unknown keys are an
// error, so a typo cannot silently leave a default in place. `lockwatch-pack --print-config`
// prints the full effective configuration, which is the reference of the schema.
//
// The dashboards generator owns the `dashboards:` section (dashboard_settings.go); everything
// else here is shared or belongs to the rules.
package packconfig

import (
	"fmt"

	"github.com/prometheus/common/model"
)

// Config is the whole pack configuration. Default() returns the values the committed files were
// generated from.
type Config struct {
	// Selectors narrow every metric selector the pack writes.
	Selectors Selectors `yaml:"selectors"`
	// ClusterLabels are the target labels that tell one deployment of lockwatch from another
	// when several clusters' series meet in one Prometheus, Thanos or Mimir (kubernetes-mixin's
	// clusterLabel / showMultiCluster), e.g. [cluster] or [cluster, region]. When set, every
	// recording rule aggregates by them as well as by job and lock namespace, every alert keeps
	// them, and each becomes a dashboard variable. Default [] (one deployment per Prometheus):
	// the output is the single-cluster pack.
	ClusterLabels []string `yaml:"cluster_labels"`
	// RunbookBaseURL is the URL of docs/runbook.md; each alert's runbook_url is this URL plus
	// "#" and the lower-cased alert name (the GitHub heading anchor of its section).
	// Default: https://github.com/lockwatch/lockwatch/blob/main/docs/runbook.md
	RunbookBaseURL string `yaml:"runbook_base_url"`
	// RecordingWindows are the rate windows every recording rule is written for. Windows that
	// an alert needs are added automatically. Default: [5m, 30m, 1h, 6h].
	RecordingWindows []model.Duration `yaml:"recording_windows"`
	// Alerts holds one section per alert.
	Alerts Alerts `yaml:"alerts"`
	// Dashboards holds the dashboard generator's settings.
	Dashboards Dashboards `yaml:"dashboards"`
	// Namespaces are the lock namespaces, as the exporter configuration lists them
	// (locks.go). With them, the pack also writes the exporter's configuration, the chart's
	// values and Kubernetes manifests for them. Default none.
	Namespaces Namespaces `yaml:"namespaces"`
	// Redis is the Redis holding the locks of Namespaces.
	Redis Redis `yaml:"redis"`
}

// Selectors are PromQL label matchers without braces, e.g. `job="lock-exporter"` or
// `cluster="eu1", job=~"workers|schedulers"`. Empty means no extra matcher: the lock_ metric
// names are specific enough to stand alone, and an empty default cannot silently mismatch
// whatever job name a deployment chose.
type Selectors struct {
	// Library narrows the lease library's metrics (the applications' scrape jobs). Default "".
	Library string `yaml:"library"`
	// Exporter narrows the lock-exporter's metrics. Default "".
	Exporter string `yaml:"exporter"`
}

// Alerts has one section per generated alert.
type Alerts struct {
	// NotOwnedRatio configures LockNotOwnedRatioHigh: renewals and releases that found the
	// lease already owned by someone else, over all renewals and releases.
	NotOwnedRatio RatioAlert `yaml:"not_owned_ratio"`
	// RenewalFailureRatio configures LockRenewalFailureRatioHigh: renewals that failed with an
	// error or timeout, over all renewals.
	RenewalFailureRatio RatioAlert `yaml:"renewal_failure_ratio"`
	// Abandonments configures LockAbandonmentsSustained.
	Abandonments AbandonmentAlert `yaml:"abandonments"`
	// WaitP99 configures LockWaitP99High.
	WaitP99 WaitAlert `yaml:"wait_p99"`
	// FencedWriteRejectionRatio configures LockFencedWriteRejectionRatioHigh: fenced writes the
	// storage rejected because a newer holder's fence had passed them, over all fenced writes.
	FencedWriteRejectionRatio EventRatioAlert `yaml:"fenced_write_rejection_ratio"`
	// KeyWithoutTTL configures LockKeyWithoutTTL.
	KeyWithoutTTL SimpleAlert `yaml:"key_without_ttl"`
	// RenewalStalled configures LockRenewalStalled.
	RenewalStalled StalledAlert `yaml:"renewal_stalled"`
	// ExporterRedisDown configures LockExporterRedisDown.
	ExporterRedisDown SimpleAlert `yaml:"exporter_redis_down"`
	// ExporterAbsent configures LockExporterAbsent (no exporter series at all).
	ExporterAbsent SimpleAlert `yaml:"exporter_absent"`
	// ExporterScrapeIncomplete configures LockExporterScrapeIncomplete (scan deadline hit).
	ExporterScrapeIncomplete SimpleAlert `yaml:"exporter_scrape_incomplete"`
	// ExporterKeysTruncated configures LockExporterKeysTruncated (per-namespace key cap hit).
	ExporterKeysTruncated SimpleAlert `yaml:"exporter_keys_truncated"`
	// ExporterConfigReloadFailed configures LockExporterConfigReloadFailed (the configuration
	// file does not load; the previous one is still served).
	ExporterConfigReloadFailed SimpleAlert `yaml:"exporter_config_reload_failed"`
	// HeldTooLong configures LockHeldTooLong: a lock held longer than the maximum its
	// namespace declares in the exporter configuration (expected_max_hold).
	HeldTooLong SimpleAlert `yaml:"held_too_long"`
	// LapseRatio configures LockKeyLapseRatioHigh: holds that ended by expiry, over all the
	// holds whose end the exporter's change feed could attribute, in any client's locks.
	LapseRatio EventRatioAlert `yaml:"lapse_ratio"`
	// TakeoverRatio configures LockKeyTakeoverRatioHigh: acquisitions that took a key over
	// soon after its previous hold expired or was overwritten, over all acquisitions.
	TakeoverRatio EventRatioAlert `yaml:"takeover_ratio"`
}

// Tier is one window pair of a multi-window ratio alert: the ratio over Long and over Short must
// both exceed Threshold. The long window proves the problem is big; the short one proves it is
// still happening, so the alert resolves soon after recovery.
type Tier struct {
	Severity  string         `yaml:"severity"`
	Long      model.Duration `yaml:"long"`
	Short     model.Duration `yaml:"short"`
	Threshold float64        `yaml:"threshold"` // a ratio in (0, 1]
	For       model.Duration `yaml:"for"`
}

// RatioAlert is a two-tier multi-window ratio alert with a minimum-traffic guard.
type RatioAlert struct {
	Disabled bool `yaml:"disabled"`
	// MinOperations is how many operations (the ratio's denominator) a tier's long window must
	// hold before the ratio may alert, so a handful of operations cannot page anyone.
	MinOperations float64 `yaml:"min_operations"`
	Fast          Tier    `yaml:"fast"`
	Slow          Tier    `yaml:"slow"`
}

// AbandonmentAlert fires when abandonments keep happening: at least MinCount over Long, and
// some in every Short window for the whole For duration (For must be longer than Short, so a
// single burst cannot satisfy it).
type AbandonmentAlert struct {
	Disabled bool           `yaml:"disabled"`
	Severity string         `yaml:"severity"`
	Long     model.Duration `yaml:"long"`
	Short    model.Duration `yaml:"short"`
	MinCount float64        `yaml:"min_count"`
	For      model.Duration `yaml:"for"`
}

// WaitAlert fires when the acquire-wait p99 over both Long and Short exceeds ThresholdSeconds
// and Long held at least MinAcquires acquire calls (a p99 of a few samples means nothing).
type WaitAlert struct {
	Disabled         bool           `yaml:"disabled"`
	Severity         string         `yaml:"severity"`
	ThresholdSeconds float64        `yaml:"threshold_seconds"`
	Long             model.Duration `yaml:"long"`
	Short            model.Duration `yaml:"short"`
	MinAcquires      float64        `yaml:"min_acquires"`
	For              model.Duration `yaml:"for"`
}

// EventRatioAlert fires on a ratio of counted events (lock lifecycle events the exporter derives
// from its change feed, or the library's fenced writes) when it exceeds Threshold over both Long
// and Short for For, and Long held at least MinEvents events of the ratio's denominator. The
// events are counted in the long window rather than as a rate, because they are rare enough that
// a count is what a reader compares. For must be longer than Short, so that one burst cannot fire
// it.
type EventRatioAlert struct {
	Disabled  bool           `yaml:"disabled"`
	Severity  string         `yaml:"severity"`
	Threshold float64        `yaml:"threshold"` // a ratio in (0, 1]
	Long      model.Duration `yaml:"long"`
	Short     model.Duration `yaml:"short"`
	MinEvents float64        `yaml:"min_events"`
	For       model.Duration `yaml:"for"`
}

// StalledAlert fires when a namespace's stalest live key has been idle longer than Factor times
// the namespace's declared renew interval.
type StalledAlert struct {
	Disabled bool           `yaml:"disabled"`
	Severity string         `yaml:"severity"`
	Factor   float64        `yaml:"factor"`
	For      model.Duration `yaml:"for"`
}

// SimpleAlert is a condition alert with only a severity and a for: duration to tune.
type SimpleAlert struct {
	Disabled bool           `yaml:"disabled"`
	Severity string         `yaml:"severity"`
	For      model.Duration `yaml:"for"`
}

// DefaultRunbookBaseURL is where docs/runbook.md is published.
const DefaultRunbookBaseURL = "https://github.com/lockwatch/lockwatch/blob/main/docs/runbook.md"

// Severities are the allowed severity labels: critical pages, warning opens a ticket, info is
// not routed on its own.
var severities = []string{"critical", "warning", "info"}

// Default returns the configuration the committed pack is generated from. The numbers follow the
// seeds: leases of 10s to 10min renewed every TTL/3, Redis failovers of about 15s that must not
// page, and sustained ratios that must.
func Default() Config {
	return Config{
		ClusterLabels:    []string{},
		RunbookBaseURL:   DefaultRunbookBaseURL,
		RecordingWindows: []model.Duration{d("5m"), d("30m"), d("1h"), d("6h")},
		Alerts: Alerts{
			NotOwnedRatio: RatioAlert{
				MinOperations: 100,
				Fast:          Tier{Severity: "critical", Long: d("1h"), Short: d("5m"), Threshold: 0.05, For: d("2m")},
				Slow:          Tier{Severity: "warning", Long: d("6h"), Short: d("30m"), Threshold: 0.01, For: d("15m")},
			},
			RenewalFailureRatio: RatioAlert{
				MinOperations: 100,
				Fast:          Tier{Severity: "critical", Long: d("1h"), Short: d("5m"), Threshold: 0.10, For: d("2m")},
				Slow:          Tier{Severity: "warning", Long: d("6h"), Short: d("30m"), Threshold: 0.02, For: d("15m")},
			},
			Abandonments: AbandonmentAlert{
				Severity: "warning", Long: d("1h"), Short: d("5m"), MinCount: 5, For: d("15m"),
			},
			WaitP99: WaitAlert{
				Severity: "warning", ThresholdSeconds: 1, Long: d("30m"), Short: d("5m"),
				MinAcquires: 100, For: d("15m"),
			},
			// A rejected fenced write is a holder that kept working after its lease passed on:
			// rarer than a lapse (most lapses are never followed by a write), so a lower share.
			FencedWriteRejectionRatio: EventRatioAlert{
				Severity: "warning", Threshold: 0.01, Long: d("1h"), Short: d("5m"), MinEvents: 20, For: d("10m"),
			},
			KeyWithoutTTL:              SimpleAlert{Severity: "warning", For: d("10m")},
			RenewalStalled:             StalledAlert{Severity: "warning", Factor: 2, For: d("2m")},
			ExporterRedisDown:          SimpleAlert{Severity: "critical", For: d("5m")},
			ExporterAbsent:             SimpleAlert{Severity: "warning", For: d("10m")},
			ExporterScrapeIncomplete:   SimpleAlert{Severity: "warning", For: d("15m")},
			ExporterKeysTruncated:      SimpleAlert{Severity: "info", For: d("30m")},
			ExporterConfigReloadFailed: SimpleAlert{Severity: "warning", For: d("10m")},
			HeldTooLong:                SimpleAlert{Severity: "warning", For: d("5m")},
			LapseRatio: EventRatioAlert{
				Severity: "warning", Threshold: 0.05, Long: d("1h"), Short: d("5m"), MinEvents: 20, For: d("10m"),
			},
			TakeoverRatio: EventRatioAlert{
				Severity: "warning", Threshold: 0.05, Long: d("1h"), Short: d("5m"), MinEvents: 20, For: d("10m"),
			},
		},
		Dashboards: defaultDashboards(),
		Namespaces: Namespaces{},
		Redis:      Redis{Addrs: []string{}},
	}
}

// d parses a duration literal of Default(); the literals are constants, so failure is a
// programming error caught by every test.
func d(s string) model.Duration {
	v, err := model.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("packconfig: bad default duration %q: %v", s, err))
	}
	return v
}
