package packconfig

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Validate reports the first invalid setting, naming it by its YAML path.
func (c Config) Validate() error {
	for _, s := range []struct {
		path, value string
	}{
		{"selectors.library", c.Selectors.Library},
		{"selectors.exporter", c.Selectors.Exporter},
	} {
		if _, err := ParseSelector(s.value); err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
	}
	if err := checkClusterLabels(c.ClusterLabels); err != nil {
		return fmt.Errorf("cluster_labels%w", err)
	}
	u, err := url.Parse(c.RunbookBaseURL)
	if err != nil || !u.IsAbs() || u.Host == "" || strings.Contains(c.RunbookBaseURL, "#") {
		return fmt.Errorf("runbook_base_url: %q is not an absolute URL without a #fragment", c.RunbookBaseURL)
	}
	if strings.ContainsFunc(c.RunbookBaseURL, unicode.IsSpace) {
		// Where alerts are shown, a space ends the link: half a URL would be followed.
		return fmt.Errorf("runbook_base_url: %q has a space; write it as %%20", c.RunbookBaseURL)
	}
	if len(c.RecordingWindows) == 0 {
		return errors.New("recording_windows: at least one window is needed")
	}
	for i, w := range c.RecordingWindows {
		if err := checkWindow(w); err != nil {
			return fmt.Errorf("recording_windows[%d]: %w", i, err)
		}
	}
	if err := c.Alerts.validate(); err != nil {
		return fmt.Errorf("alerts.%w", err)
	}
	if err := c.Dashboards.validate(); err != nil {
		return fmt.Errorf("dashboards.%w", err)
	}
	return c.validateLocks()
}

// packLabels are the labels the pack's own queries group or filter by: histogram buckets for
// the quantiles, outcomes for the ratios, keys for the top-K panels. A selector matching on one
// would leave those queries reading part of a family (a ratio of the "ok" outcomes alone, a
// quantile without its buckets) or nothing, with no error anywhere.
var packLabels = map[string]string{
	"le":      "the wait quantiles read every bucket",
	"outcome": "the ratios read every outcome",
	"key":     "the stalest-key panels read every key",
}

// ParseSelector parses label matchers written without braces, as in Selectors. It refuses a
// metric-name matcher (the pack chooses the metric names) and a matcher on one of packLabels.
func ParseSelector(s string) ([]*labels.Matcher, error) {
	if s == "" {
		return nil, nil
	}
	ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector("{" + s + "}")
	if err != nil {
		return nil, fmt.Errorf("%q is not a list of PromQL label matchers: %w", s, err)
	}
	for _, m := range ms {
		if m.Name == model.MetricNameLabel {
			return nil, fmt.Errorf("%q: a metric-name matcher is not allowed here", s)
		}
		if why, ok := packLabels[m.Name]; ok {
			return nil, fmt.Errorf("%q: a matcher on %s is not allowed here (%s); narrow by target labels such as job, instance or cluster", s, m.Name, why)
		}
	}
	return ms, nil
}

func (a Alerts) validate() error {
	for _, r := range []struct {
		path string
		a    RatioAlert
	}{
		{"not_owned_ratio", a.NotOwnedRatio},
		{"renewal_failure_ratio", a.RenewalFailureRatio},
	} {
		if err := r.a.validate(); err != nil {
			return fmt.Errorf("%s.%w", r.path, err)
		}
	}
	if err := a.Abandonments.validate(); err != nil {
		return fmt.Errorf("abandonments.%w", err)
	}
	if err := a.WaitP99.validate(); err != nil {
		return fmt.Errorf("wait_p99.%w", err)
	}
	if err := a.RenewalStalled.validate(); err != nil {
		return fmt.Errorf("renewal_stalled.%w", err)
	}
	for _, r := range []struct {
		path string
		a    EventRatioAlert
	}{
		{"fenced_write_rejection_ratio", a.FencedWriteRejectionRatio},
		{"lapse_ratio", a.LapseRatio},
		{"takeover_ratio", a.TakeoverRatio},
	} {
		if err := r.a.validate(); err != nil {
			return fmt.Errorf("%s.%w", r.path, err)
		}
	}
	for _, s := range []struct {
		path string
		a    SimpleAlert
	}{
		{"key_without_ttl", a.KeyWithoutTTL},
		{"exporter_redis_down", a.ExporterRedisDown},
		{"exporter_absent", a.ExporterAbsent},
		{"exporter_scrape_incomplete", a.ExporterScrapeIncomplete},
		{"exporter_keys_truncated", a.ExporterKeysTruncated},
		{"exporter_config_reload_failed", a.ExporterConfigReloadFailed},
		{"held_too_long", a.HeldTooLong},
	} {
		if err := checkSeverityFor(s.a.Severity, s.a.For); err != nil {
			return fmt.Errorf("%s.%w", s.path, err)
		}
	}
	return nil
}

func (r RatioAlert) validate() error {
	if r.MinOperations < 0 {
		return fmt.Errorf("min_operations: %g is negative", r.MinOperations)
	}
	for _, t := range []struct {
		path string
		t    Tier
	}{{"fast", r.Fast}, {"slow", r.Slow}} {
		if err := t.t.validate(); err != nil {
			return fmt.Errorf("%s.%w", t.path, err)
		}
	}
	return nil
}

func (t Tier) validate() error {
	if err := checkSeverityFor(t.Severity, t.For); err != nil {
		return err
	}
	if err := checkWindows(t.Long, t.Short); err != nil {
		return err
	}
	if !(t.Threshold > 0 && t.Threshold <= 1) {
		return fmt.Errorf("threshold: %g is not a ratio in (0, 1]", t.Threshold)
	}
	return nil
}

func (a AbandonmentAlert) validate() error {
	if err := checkSeverityFor(a.Severity, a.For); err != nil {
		return err
	}
	if err := checkWindows(a.Long, a.Short); err != nil {
		return err
	}
	if a.MinCount <= 0 {
		return fmt.Errorf("min_count: %g is not positive", a.MinCount)
	}
	// With for: no longer than the short window, one burst keeps the short window non-zero for
	// the whole for: duration and the alert would page on a single event.
	if a.For <= a.Short {
		return fmt.Errorf("for: %s must be longer than short: %s, or a single burst fires the alert", a.For, a.Short)
	}
	return nil
}

func (l EventRatioAlert) validate() error {
	if err := checkSeverityFor(l.Severity, l.For); err != nil {
		return err
	}
	if err := checkWindows(l.Long, l.Short); err != nil {
		return err
	}
	if !(l.Threshold > 0 && l.Threshold <= 1) {
		return fmt.Errorf("threshold: %g is not a ratio in (0, 1]", l.Threshold)
	}
	if l.MinEvents < 0 {
		return fmt.Errorf("min_events: %g is negative", l.MinEvents)
	}
	// The short window holds a burst for exactly its own length: with for: no longer, one
	// burst of lapses (a failover) keeps both windows above the threshold long enough to fire.
	if l.For <= l.Short {
		return fmt.Errorf("for: %s must be longer than short: %s, or a single burst fires the alert", l.For, l.Short)
	}
	return nil
}

func (w WaitAlert) validate() error {
	if err := checkSeverityFor(w.Severity, w.For); err != nil {
		return err
	}
	if err := checkWindows(w.Long, w.Short); err != nil {
		return err
	}
	if w.ThresholdSeconds <= 0 {
		return fmt.Errorf("threshold_seconds: %g is not positive", w.ThresholdSeconds)
	}
	if w.MinAcquires < 0 {
		return fmt.Errorf("min_acquires: %g is negative", w.MinAcquires)
	}
	return nil
}

func (s StalledAlert) validate() error {
	if err := checkSeverityFor(s.Severity, s.For); err != nil {
		return err
	}
	if s.Factor < 1 {
		return fmt.Errorf("factor: %g is below 1 (keys are idle up to one renew interval when healthy)", s.Factor)
	}
	return nil
}

func checkSeverityFor(severity string, forDur model.Duration) error {
	if !slices.Contains(severities, severity) {
		return fmt.Errorf("severity: %q is not one of %v", severity, severities)
	}
	if forDur < 0 {
		return fmt.Errorf("for: %s is negative", forDur)
	}
	return nil
}

func checkWindows(long, short model.Duration) error {
	if err := checkWindow(short); err != nil {
		return fmt.Errorf("short: %w", err)
	}
	if err := checkWindow(long); err != nil {
		return fmt.Errorf("long: %w", err)
	}
	if long <= short {
		return fmt.Errorf("long: %s must be longer than short: %s", long, short)
	}
	return nil
}

// checkWindow refuses a rate window that is not a positive whole number of seconds. A window
// under a second holds no two samples at any scrape interval, so every rule over it is empty
// and its alert never fires, without an error anywhere: "5ms" written for "5m".
func checkWindow(w model.Duration) error {
	if w <= 0 {
		return fmt.Errorf("%s is not a positive duration", w)
	}
	if time.Duration(w)%time.Second != 0 {
		return fmt.Errorf("%s is not a whole number of seconds (a rate window under a second holds no two samples)", w)
	}
	return nil
}

// labelName is Prometheus's classic label-name syntax: cluster labels end up in `by (…)`
// clauses and Grafana variable names, where only this form works unquoted.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// reservedLabels are labels the pack already groups or matches by, or dashboard variable names it
// already uses: a cluster label of the same name would be written twice into every aggregation,
// or clash with a variable.
var reservedLabels = []string{"job", "instance", "lock_namespace", "le", "outcome", "key", "severity", "alertname", "alertstate", "datasource", "exporter_job"}

// checkClusterLabels returns an error starting with "[i]: " or ": " so the caller can prefix the
// key.
func checkClusterLabels(names []string) error {
	for i, n := range names {
		switch {
		case !labelName.MatchString(n) || strings.HasPrefix(n, "__"):
			return fmt.Errorf("[%d]: %q is not a Prometheus label name", i, n)
		case slices.Contains(reservedLabels, n):
			return fmt.Errorf("[%d]: %q is a label the pack already uses (%s)", i, n, strings.Join(reservedLabels, ", "))
		case slices.Contains(names[:i], n):
			return fmt.Errorf("[%d]: %q is listed twice", i, n)
		}
	}
	return nil
}
